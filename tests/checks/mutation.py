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


class _Mutator(ast.NodeTransformer):
    def __init__(self, target: int):
        self.target, self.count, self.applied = target, 0, None
        self.in_function = 0

    def visit_FunctionDef(self, node):
        self.in_function += 1
        body = node.body
        start = 1 if body and isinstance(body[0], ast.Expr) and isinstance(body[0].value, ast.Constant) else 0
        new_body = body[:start]
        for stmt in body[start:]:
            stmt = self.visit(stmt)
            new_body.append(stmt)
        node.body = new_body
        self.in_function -= 1
        return node

    def visit(self, node):
        if isinstance(node, ast.FunctionDef):
            return self.visit_FunctionDef(node)
        node = self.generic_visit(node)
        if not self.in_function or self.applied:
            return node
        options = list(_options(node))
        if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) and not _is_docstring(node) \
                and not (isinstance(node, ast.Expr) and isinstance(node.value, ast.Call) and _is_super(
                    getattr(node.value.func, "value", None))):
            options.append((f"delete statement: {ast.unparse(node).splitlines()[0]}", ast.Pass()))
        for what, replacement in options:
            if self.count == self.target:
                self.applied = (getattr(node, "lineno", 0), what)
                self.count += 1
                return ast.copy_location(replacement, node) if hasattr(node, "lineno") else replacement
            self.count += 1
        return node


def _is_docstring(node) -> bool:
    return isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str)


def mutants(source: str):
    """Every mutant of source that still compiles and differs from it."""
    original = ast.unparse(ast.parse(source))
    index = 0
    while True:
        mutator = _Mutator(index)
        tree = mutator.visit(ast.parse(source))
        if mutator.applied is None:
            return
        line, what = mutator.applied
        try:
            text = ast.unparse(ast.fix_missing_locations(tree))
            compile(text, "<mutant>", "exec")
        except (SyntaxError, ValueError, TypeError):
            text = None
        if text is not None and text != original:
            yield Mutant(index, line, what, text)
        index += 1
