"""Mechanical mutants of a reference: one small change each, inside function bodies only.

Operators: arithmetic swapped (+ -, * /, @ *), an operand dropped (a / b -> a), a unary minus
or ~ dropped, comparisons flipped, numbers changed (n -> n + 1, n -> -n, 0 -> 1), True/False
swapped, a call dropped (x.transpose(1, 2) -> x, math.sqrt(d) -> d), a statement deleted.
"""

from __future__ import annotations

import ast
import copy
from dataclasses import dataclass

_SWAP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.MatMult: ast.Mult,
         ast.Pow: ast.Mult, ast.FloorDiv: ast.Div, ast.Mod: ast.FloorDiv}
_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt, ast.Eq: ast.NotEq,
         ast.NotEq: ast.Eq, ast.Is: ast.IsNot, ast.IsNot: ast.Is}


@dataclass(frozen=True)
class Mutant:
    index: int
    line: int
    what: str  # e.g. "drop call: x.transpose(1, 2) -> x"
    source: str

    @property
    def key(self) -> str:
        """Stable name for the allow-list of equivalent mutants: the change, not its position."""
        return self.what


def _options(node):
    """(description, replacement) pairs for one node."""
    text = ast.unparse(node) if isinstance(node, ast.expr) else ""
    if isinstance(node, ast.BinOp):
        if type(node.op) in _SWAP:
            new = copy.copy(node)
            new.op = _SWAP[type(node.op)]()
            yield f"swap operator: {text} -> {ast.unparse(new)}", new
        yield f"drop operand: {text} -> {ast.unparse(node.left)}", node.left
        if not isinstance(node.op, (ast.Div, ast.FloorDiv, ast.Pow, ast.Mod)):
            yield f"drop operand: {text} -> {ast.unparse(node.right)}", node.right
    elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.USub, ast.Invert, ast.Not)):
        yield f"drop unary: {text} -> {ast.unparse(node.operand)}", node.operand
    elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _FLIP:
        new = copy.copy(node)
        new.ops = [_FLIP[type(node.ops[0])]()]
        yield f"flip comparison: {text} -> {ast.unparse(new)}", new
    elif isinstance(node, ast.Constant) and isinstance(node.value, bool):
        yield f"flip bool: {text} -> {not node.value}", ast.Constant(not node.value)
    elif isinstance(node, ast.Constant) and isinstance(node.value, (int, float)):
        value = node.value
        changed = {value + 1, -value if value else 1, value * 2 if isinstance(value, float) else value + 2}
        for other in sorted(changed - {value}):
            yield f"change number: {text} -> {other!r}", ast.Constant(other)
    elif isinstance(node, ast.Call):
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr != "__init__" and not _is_super(func.value):
            if not (isinstance(func.value, ast.Name) and func.value.id in {"math", "np", "numpy", "torch", "F", "nn"}):
                yield f"drop call: {text} -> {ast.unparse(func.value)}", func.value
        if node.args and not isinstance(node.args[0], ast.Starred):
            yield f"drop call: {text} -> {ast.unparse(node.args[0])}", node.args[0]


def _is_super(node) -> bool:
    return isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "super"


def _sites(tree: ast.Module) -> list[tuple[ast.AST, str, int | None, ast.AST, str, ast.AST]]:
    """(parent, field, index, node, what, replacement) of every mutation, in the order mutants are numbered: each
    node after its children, inside function bodies (a docstring left alone)."""
    sites = []

    def visit(node, parent, field, index, in_function):
        if isinstance(node, ast.FunctionDef):
            body = node.body
            start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
            for i, stmt in enumerate(body[start:], start):
                visit(stmt, node, "body", i, in_function + 1)
            return
        for name, value in ast.iter_fields(node):
            if isinstance(value, list):
                for i, item in enumerate(value):
                    if isinstance(item, ast.AST):
                        visit(item, node, name, i, in_function)
            elif isinstance(value, ast.AST):
                visit(value, node, name, None, in_function)
        if not in_function:
            return
        options = list(_options(node))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) and not _is_docstring(node) \
                and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _is_super(
                    getattr(node.value.func, "value", None))):
            options.append((f"delete statement: {ast.unparse(node).splitlines()[0]}", ast.Pass()))
        sites.extend((parent, field, index, node, what, replacement) for what, replacement in options)

    visit(tree, None, "", None, 0)
    return sites


def _put(parent, field: str, index: int | None, node: ast.AST) -> None:
    if index is None:
        setattr(parent, field, node)
    else:
        getattr(parent, field)[index] = node


def _is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def mutants(source: str):
    """Every mutant of source that still compiles and differs from it. The source is parsed once; each mutation is
    put in its place, the tree written out, and the node put back."""
    tree = ast.parse(source)
    original = ast.unparse(tree)
    for index, (parent, field, at, node, what, replacement) in enumerate(_sites(tree)):
        line = getattr(node, "lineno", 0)
        if hasattr(node, "lineno"):
            replacement = ast.copy_location(copy.copy(replacement), node)
        _put(parent, field, at, replacement)
        try:
            text = ast.unparse(tree)
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError):
            text = None
        finally:
            _put(parent, field, at, node)
        if text is not None and text != original:
            yield Mutant(index, line, what, text)
