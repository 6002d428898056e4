"""The error model: the smallest change to the reference that reproduces the user's outputs.

A reference plus rewrite rules for the slips people make when they write tensors by hand (Singh, Gulwani
and Solar-Lezama, PLDI 2013). When a file fails and no named mistake fits, each single rewrite of the
reference's own code is run on the inputs of the failing check. A rewrite is stated only when it gives the
user's outputs on every case where they are wrong, and the reference's where the user's are right; when
rewrites of more than two kinds fit, none is stated. Written once, for every kata: no kata code.

    rewrites(source)   every single rewrite of a module's source, each a Rewrite (rule, fragments, line)
    search(kit, ...)   the rewrites that reproduce the user's outputs, within a time budget
    explain(...)       the sentence, in the language being spoken, and the user's line where it shows
"""

from __future__ import annotations

import ast
import contextlib
import copy
import io
import math
import os
import re
import signal
import sys
import threading
import time
import types
import warnings
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from checker.lang import t

# Seconds the search may take: one part, or a composite (a layer, a model). The bound on a 2-core machine.
BUDGET = {"single": 1.0, "composite": 3.0}
MUTANT_SECONDS = 0.5  # a rewrite that runs longer than this on one case is dropped (a loop that no longer ends)
MAX_FITS = 2  # more kinds of rewrite than this fit: the outputs do not single one out, so none is said


def search_seconds(kind: str) -> float:
    """BUDGET[kind], times KATA_SEARCH_SCALE if it is set (a number): a search cut by its budget may say less on a
    slower or busier machine, so a slow laptop, or a test that compares two checks of one file, can give it more."""
    try:
        scale = float(os.environ.get("KATA_SEARCH_SCALE") or 1.0)
    except ValueError:
        scale = 1.0
    return BUDGET[kind] * (scale if math.isfinite(scale) and scale > 0 else 1.0)


# What each rule changes, said as the concept a learner would look up. A lambda each: t() speaks the language of the
# run, and the test of messages finds every literal here.
CONCEPTS = {
    "axis": lambda: t("the axis a reduction, softmax, cumsum or concatenation runs over"),
    "keepdim": lambda: t("keepdim dropped, so the reduced axis is gone and broadcasting lines up other axes"),
    "transpose": lambda: t("the pair of axes a transpose or permute swaps"),
    "formula": lambda: t("two slips in one formula (terms left out, a number or an operator changed)"),
    "view": lambda: t("a view or reshape without its transpose, which mixes positions and heads"),
    "unbiased": lambda: t("the unbiased flag of a variance or standard deviation (n - 1 against n)"),
    "constant": lambda: t("a constant replaced by another plausible one"),
    "written_in": lambda: t("an argument replaced by a value written into the code"),
    "power": lambda: t("a square root, power or exponent changed"),
    "argument": lambda: t("an argument or keyword left out"),
    "swapped_args": lambda: t("two arguments swapped"),
    "operands": lambda: t("the two operands swapped"),
    "term": lambda: t("a term dropped from a sum, or a factor from a product"),
    "operator": lambda: t("one arithmetic operator for another"),
    "order": lambda: t("two statements in the other order (a value read before it is updated, or after)"),
    "inplace": lambda: t("in place against a copy"),
    "branch": lambda: t("a branch taken always, or never (training, eval, a flag)"),
    "division": lambda: t("integer division against true division"),
    "off_by_one": lambda: t("an off-by-one in a range, slice, index or position"),
    "mask": lambda: t("the polarity of a mask, or which triangle of it"),
    "comparison": lambda: t("a comparison at the boundary (< against <=, == against !=)"),
    "step": lambda: t("a step left out"),
    "variable": lambda: t("one variable read where another belongs"),
    "scope": lambda: t("a step applied to the wrong part of an expression (to a whole product, or to the other factor)"),
    "function": lambda: t("one function called where its neighbour belongs (sum for mean, sin for cos, log_softmax for "
                          "softmax, ...)"),
    "statement": lambda: t("a statement left out"),
}

# Calls whose dim/axis argument picks the axis: (name, index of the dim among the positional arguments of the
# method form x.name(...); the function form torch.name(x, ...) has it one later).
_AXIS_CALLS = {"sum": 0, "mean": 0, "softmax": 0, "log_softmax": 0, "cumsum": 0, "cumprod": 0, "max": 0, "min": 0,
               "amax": 0, "amin": 0, "var": 0, "std": 0, "norm": 1, "argmax": 0, "argmin": 0, "logsumexp": 0,
               "prod": 0, "any": 0, "all": 0, "flip": 0, "squeeze": 0, "unsqueeze": 0, "expand_dims": 0,
               "cat": 1, "concatenate": 1, "stack": 1, "sort": 0, "argsort": 0, "topk": 1, "gather": 0,
               "split": 1, "chunk": 1, "roll": 1, "mT": None}
_FUNCTION_MODULES = {"torch", "F", "np", "numpy", "math", "nn", "functional"}
_AXES = (-1, -2, -3, 0, 1, 2)
_PAIRS = [(a, b) for i, a in enumerate((0, 1, 2, -2, -1)) for b in (0, 1, 2, -2, -1)[i + 1:]]
_EXPONENTS = (2, 1, 0.5, -0.5, -1, 3, 1.5)
_STEPS = {"softmax", "log_softmax", "relu", "gelu", "silu", "tanh", "sigmoid", "exp", "log", "float", "abs", "neg", "clamp", "clip", "detach", "clone", "copy", "t"}
_TRIANGLES = {"triu": "tril", "tril": "triu"}
# Functions a hand puts in place of a neighbour (sum for mean, sin for cos, log_softmax for softmax, ...).
_FAMILIES = [("sum", "mean"), ("nansum", "nanmean"), ("softmax", "log_softmax"), ("sigmoid", "silu", "relu", "gelu", "tanh"),
             ("sin", "cos"), ("floor", "round", "ceil", "trunc"), ("min", "max"), ("amin", "amax"),
             ("minimum", "maximum"), ("var", "std"), ("argmin", "argmax"), ("cumsum", "cumprod"), ("exp", "log"),
             ("exp", "expm1"), ("log", "log1p"), ("sqrt", "rsqrt"), ("topk", "sort")]
_NEIGHBOURS = {name: [o for o in family if o != name] for family in _FAMILIES for name in family}
_PRIORITY = {"axis": 0, "keepdim": 0, "transpose": 0, "view": 0, "unbiased": 0, "mask": 0, "written_in": 0,
             "power": 1, "term": 1, "step": 1, "function": 1, "scope": 1, "constant": 1, "argument": 2, "swapped_args": 2, "operands": 2,
             "operator": 2, "division": 2, "off_by_one": 2, "comparison": 2, "branch": 2, "inplace": 3,
             "statement": 3, "order": 4, "variable": 5, "formula": 6}
_PLAUSIBLE = {  # constants people put in place of the right one, by the size of the right one
    "tiny": (1e-5, 1e-6, 1e-8, 1e-9, 1e-12, 1e-4, 0.0),
    "fraction": (0.1, 0.2, 0.5, 0.9, 0.99, 0.999, 1.0, 0.0),
    "large": (10000.0, 512, 1e4, 1e9, 1000, 4000),
    "negative": (-1e4, -1e9, -1e5, float("-inf"), 0.0),
}
_WRITTEN_IN = {"float": (1e-5, 1e-6, 1e-12, 0.1, 0.2, 0.5, 0.9, 0.999, 1.0, 0.0), "int": (512, 64, 1, 0, 10000, 4000)}


@dataclass(frozen=True)
class Rewrite:
    rule: str
    line: int  # in the reference
    before: str  # the reference's fragment
    after: str  # the fragment as rewritten
    anchor: tuple = ()  # what to look for in the user's code, best first: ("value", 1e-12), ("call", "clamp")
    changed: str = ""  # the whole statement that holds it, as rewritten: two rules that write the same are one change
    changes: int = 1  # 2: two rewrites of one statement, said as that statement before and after


@dataclass
class _Site:
    parent: ast.AST
    field: str
    index: int | None
    node: ast.AST
    top: int = 0  # which statement of the module holds it (compiled alone when rewritten)
    func: str = ""  # the function that holds it


def _text(node) -> str:
    try:
        text = ast.unparse(node)
    except Exception:  # noqa: BLE001
        return "?"
    text = text.splitlines()[0] if text else text
    return text if len(text) <= 100 else text[:97] + "..."


def _name(call: ast.Call) -> str:
    f = call.func
    return f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else ""


def _is_function_form(call: ast.Call) -> bool:
    f = call.func
    return isinstance(f, ast.Name) or (isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
                                        and f.value.id in _FUNCTION_MODULES)


def _num(value) -> ast.expr:
    """A number as code, written as a person writes it (1e-12, -1e9, 512, float('-inf'))."""
    return ast.parse(_shown(value), mode="eval").body


def _value(node):
    """The number a constant expression stands for (5, -1, -1e9, float('-inf')), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, (int, float)) and not isinstance(node.value, bool):
        return node.value
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        inner = _value(node.operand)
        return None if inner is None else -inner
    if isinstance(node, ast.Call) and _name(node) == "float" and node.args and isinstance(node.args[0], ast.Constant) \
            and isinstance(node.args[0].value, str) and "inf" in node.args[0].value:
        return float(node.args[0].value)
    return None


def _call(call: ast.Call, *, args=None, keywords=None, func=None) -> ast.Call:
    return ast.Call(func=func or call.func, args=list(call.args if args is None else args),
                    keywords=list(call.keywords if keywords is None else keywords))


def _with_keyword(call: ast.Call, name: str, value) -> ast.Call:
    """The call with keyword name set to value in its place (added last if new), or left out where value is None."""
    if value is not None and not any(k.arg == name for k in call.keywords):
        return _call(call, keywords=[*call.keywords, ast.keyword(arg=name, value=value)])
    return _call(call, keywords=[k if k.arg != name else ast.keyword(arg=name, value=value) for k in call.keywords
                                 if value is not None or k.arg != name])


_EXTREMA = ("max", "min", "maximum", "minimum", "fmax", "fmin")  # of two values: one of them left out is a slip


def _call_options(call: ast.Call):
    name, function_form = _name(call), _is_function_form(call)
    kw = {k.arg: k for k in call.keywords if k.arg}
    receiver = call.func.value if isinstance(call.func, ast.Attribute) else None
    # axis: the dim/axis keyword or the positional dim
    if name in _AXIS_CALLS and _AXIS_CALLS[name] is not None:
        key = "dim" if "dim" in kw else "axis" if "axis" in kw else None
        position = _AXIS_CALLS[name] + (1 if function_form and name not in ("cat", "concatenate", "stack") else 0)
        if name in ("cat", "concatenate", "stack"):
            position = 1
        current = kw[key].value if key else call.args[position] if len(call.args) > position else None
        if current is not None:
            value = _value(current)
            if isinstance(value, int):
                wider = [] if name in ("cat", "concatenate", "stack", "softmax", "log_softmax", "cumsum", "cumprod") \
                    else [ast.Tuple([_num(-2), _num(-1)], ast.Load())] if value == -1 else []  # the last two at once
                for other in [_num(a) for a in _AXES if a != value] + wider:
                    yield "axis", (_with_keyword(call, key, other) if key else
                                   _call(call, args=[*call.args[:position], other, *call.args[position + 1:]]))
            elif isinstance(current, ast.Tuple) and len(current.elts) > 1:
                for i in range(len(current.elts)):
                    kept = ast.Tuple([e for j, e in enumerate(current.elts) if j != i], ast.Load())
                    yield "axis", (_with_keyword(call, key, kept) if key else
                                   _call(call, args=[*call.args[:position], kept, *call.args[position + 1:]]))
            if key and name not in ("cat", "stack", "concatenate", "softmax", "log_softmax", "cumsum", "cumprod"):
                yield "axis", _with_keyword(call, key, ast.Constant(None))  # the whole tensor at once
    for flag in ("keepdim", "keepdims"):
        if flag in kw and _value(kw[flag].value) is None and isinstance(kw[flag].value, ast.Constant) \
                and kw[flag].value.value is True:
            yield "keepdim", _with_keyword(call, flag, None)
    # the unbiased flag
    if name in ("var", "std"):
        if "unbiased" in kw and isinstance(kw["unbiased"].value, ast.Constant):
            yield "unbiased", _with_keyword(call, "unbiased", ast.Constant(not kw["unbiased"].value.value))
        elif "correction" in kw:
            yield "unbiased", _with_keyword(call, "correction", ast.Constant(1 - (_value(kw["correction"].value) or 0)))
        elif "ddof" in kw:
            yield "unbiased", _with_keyword(call, "ddof", ast.Constant(1 - (_value(kw["ddof"].value) or 0)))
        else:  # the default: unbiased in torch, biased in NumPy; whichever library it is, one of the two runs
            yield "unbiased", _with_keyword(call, "unbiased", ast.Constant(True))
            yield "unbiased", _with_keyword(call, "ddof", ast.Constant(1))
    # transposes and permutes
    if name in ("transpose", "swapaxes") and len(call.args) >= 2 + function_form:
        first = function_form
        current = (_value(call.args[first]), _value(call.args[first + 1]))
        for pair in _PAIRS:
            if set(pair) != set(current):
                yield "transpose", _call(call, args=[*call.args[:first], _num(pair[0]), _num(pair[1])])
    if name in ("permute",) and len(call.args) >= 2:
        for i in range(len(call.args)):
            for j in range(i + 1, len(call.args)):
                args = list(call.args)
                args[i], args[j] = args[j], args[i]
                yield "transpose", _call(call, args=args)
    if name in ("transpose", "permute", "swapaxes", "t") and receiver is not None and not function_form:
        yield "view", receiver
    if name in ("view", "reshape") and receiver is not None and len(call.args) >= 3:
        for i in range(len(call.args) - 1):
            args = list(call.args)
            args[i], args[i + 1] = args[i + 1], args[i]
            yield "view", _call(call, args=args)
    # roots, powers, exponents
    if name in ("pow", "float_power") and call.args:
        value = _value(call.args[-1])
        if value is not None:
            for e in _EXPONENTS:
                if e != value:
                    yield "power", _call(call, args=[*call.args[:-1], _num(e)])
    if name == "sqrt":
        yield "power", _call(call, func=_renamed(call.func, "rsqrt")) if receiver is not None and not function_form \
            else call.args[0] if call.args else None
        if receiver is not None and not function_form:
            yield "power", receiver
    if name == "sqrt":  # the root taken as another power: sqrt(sqrt(v)), v ** 1.5, ...
        base = call.args[0] if function_form and call.args else receiver if not function_form else None
        if base is not None:
            for e in (0.25, 1.5, -0.5, 2):
                yield "power", ast.BinOp(base, ast.Pow(), _num(e))
    if name == "rsqrt" and receiver is not None and not function_form:
        yield "power", _call(call, func=_renamed(call.func, "sqrt"))
    # a step left out: an elementwise function or a softmax
    if name in _STEPS:
        if function_form and call.args:
            yield "step", call.args[0]
        elif receiver is not None and not function_form:
            yield "step", receiver
    # a neighbouring function
    if name in _NEIGHBOURS and name not in _TRIANGLES:
        for other in _NEIGHBOURS[name]:
            yield "function", _call(call, func=_renamed(call.func, other))
    # mask polarity and triangles
    if name in ("masked_fill", "masked_fill_") and call.args and not isinstance(call.args[0], ast.UnaryOp):
        yield "mask", _call(call, args=[_negated(call.args[0]), *call.args[1:]])
    if name == "where" and len(call.args) == 3:
        yield "mask", _call(call, args=[call.args[0], call.args[2], call.args[1]])
    if name in _TRIANGLES:
        yield "mask", _call(call, func=_renamed(call.func, _TRIANGLES[name]))
        k = kw.get("diagonal") or kw.get("k")
        at = 1 if function_form else 0  # torch.triu(x, 1) or x.triu(1)
        offset = _value(k.value) if k else (_value(call.args[at]) if len(call.args) > at else 0)
        if isinstance(offset, int):
            for other in (offset - 1, offset + 1):
                new = _num(other)
                yield "off_by_one", (_with_keyword(call, k.arg, new) if k else
                                     _call(call, args=[*call.args[:at], new, *call.args[at + 1:]]))
    # in place against a copy
    if name.endswith("_") and not name.endswith("__") and receiver is not None:
        yield "inplace", _call(call, func=_renamed(call.func, name[:-1]))
    # an argument or keyword left out, two arguments swapped
    for k in call.keywords:
        if k.arg and k.arg not in ("dim", "axis", "keepdim", "keepdims", "unbiased", "dtype", "device"):
            yield "argument", _with_keyword(call, k.arg, None)
    if name in _EXTREMA and len(call.args) == 2 and not call.keywords:  # max(seq_len, L) written max-less: seq_len
        for kept in call.args:
            yield "argument", kept
    if len(call.args) >= 2 and name not in ("view", "reshape", "permute", "transpose", "swapaxes"):
        yield "argument", _call(call, args=call.args[:-1])
        for i in range(len(call.args) - 1):
            args = list(call.args)
            args[i], args[i + 1] = args[i + 1], args[i]
            yield "swapped_args", _call(call, args=args)
    # range bounds
    if name == "range" and isinstance(call.func, ast.Name):
        for i, a in enumerate(call.args[:2]):
            for op in (ast.Add(), ast.Sub()):
                args = list(call.args)
                args[i] = ast.BinOp(a, op, ast.Constant(1))
                yield "off_by_one", _call(call, args=args)


def _renamed(func, name: str):
    if isinstance(func, ast.Attribute):
        return ast.Attribute(value=func.value, attr=name, ctx=ast.Load())
    return ast.Name(id=name, ctx=ast.Load())


def _negated(node):
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
        return node.operand
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and isinstance(node.ops[0], (ast.Eq, ast.NotEq)):
        return ast.Compare(node.left, [ast.NotEq() if isinstance(node.ops[0], ast.Eq) else ast.Eq()], node.comparators)
    return ast.UnaryOp(ast.Invert(), node)


_SWAP_OP = {ast.Add: ast.Sub, ast.Sub: ast.Add, ast.Mult: ast.Div, ast.Div: ast.Mult, ast.MatMult: ast.Mult}
_FLIP = {ast.Lt: ast.LtE, ast.LtE: ast.Lt, ast.Gt: ast.GtE, ast.GtE: ast.Gt}


def _options(node, site: _Site):
    """(rule, replacement) for one node of a function body; a replacement of None removes a statement."""
    value = _value(node)
    if value is not None:  # a number: 5, -1e9, float('-inf')
        exponent = (isinstance(site.parent, ast.BinOp) and isinstance(site.parent.op, ast.Pow)) or \
            (isinstance(site.parent, ast.Call) and _name(site.parent) in ("pow", "float_power"))
        axis = (isinstance(site.parent, ast.keyword) and site.parent.arg in ("dim", "axis", "dims", "axes")) or \
            (isinstance(site.parent, ast.Call) and _name(site.parent) in (*_AXIS_CALLS, "transpose", "permute"))
        if isinstance(value, int) and not isinstance(site.parent, ast.UnaryOp) and not exponent and not axis:
            for other in (value - 1, value + 1):
                yield "off_by_one", _num(other)
        if isinstance(value, float) or abs(value) >= 100:
            kind = "negative" if value < 0 else "tiny" if 0 < value < 1e-2 else "fraction" if value <= 1 else "large"
            for other in _PLAUSIBLE[kind]:
                if other != value:
                    yield "constant", _num(other)
        return
    if isinstance(node, ast.Call):
        yield from ((rule, new) for rule, new in _call_options(node) if new is not None)
    elif isinstance(node, ast.BinOp):
        op = type(node.op)
        if op in (ast.Sub, ast.Div, ast.MatMult, ast.FloorDiv, ast.Pow):
            yield "operands", ast.BinOp(node.right, node.op, node.left)
        if op in (ast.Add, ast.Sub, ast.Mult):
            yield "term", node.left
            yield "term", node.right
        if op in (ast.Div, ast.FloorDiv):
            yield "term", node.left
        if op in _SWAP_OP:
            yield "operator", ast.BinOp(node.left, _SWAP_OP[op](), node.right)
        if op is ast.Div:
            yield "division", ast.BinOp(node.left, ast.FloorDiv(), node.right)
        if op is ast.FloorDiv:
            yield "division", ast.BinOp(node.left, ast.Div(), node.right)
        if op is ast.Pow and _value(node.right) is not None:
            for e in _EXPONENTS:
                if e != _value(node.right):
                    yield "power", ast.BinOp(node.left, ast.Pow(), _num(e))
        yield from _scope_options(node)
    elif isinstance(node, ast.UnaryOp):
        if isinstance(node.op, (ast.Invert, ast.Not)):
            yield "mask", node.operand
        elif isinstance(node.op, ast.USub):
            yield "operator", node.operand
    elif isinstance(node, ast.Compare) and len(node.ops) == 1:
        op = type(node.ops[0])
        if op in (ast.Eq, ast.NotEq):
            yield "mask", _negated(node)
        if op in _FLIP:
            yield "comparison", ast.Compare(node.left, [_FLIP[op]()], node.comparators)
    if isinstance(node, (ast.Name, ast.Attribute)) and isinstance(getattr(node, "ctx", None), ast.Load):
        key = node.id if isinstance(node, ast.Name) else f"self.{node.attr}" if isinstance(node.value, ast.Name) \
            and node.value.id == "self" else None
        if key in ("self.training", "training"):
            yield "branch", ast.Constant(True)
            yield "branch", ast.Constant(False)
    if isinstance(node, (ast.If, ast.IfExp)):
        for value in (True, False):
            new = ast.If(ast.Constant(value), node.body, node.orelse) if isinstance(node, ast.If) else \
                ast.IfExp(ast.Constant(value), node.body, node.orelse)
            yield "branch", new
    if isinstance(node, ast.Subscript):
        yield from _slice_options(node)
    if isinstance(node, (ast.Assign, ast.AugAssign, ast.Expr)) and site.index is not None and not _protected(node):
        yield "statement", None
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
            and isinstance(node.value, ast.BinOp) and isinstance(node.value.left, ast.Name) \
            and node.value.left.id == node.targets[0].id and type(node.value.op) in (ast.Add, ast.Sub, ast.Mult, ast.Div):
        yield "inplace", ast.AugAssign(ast.Name(node.targets[0].id, ast.Store()), node.value.op, node.value.right)


_ELEMENTWISE = {"relu", "gelu", "silu", "sigmoid", "tanh", "exp", "log", "sqrt", "abs", "softmax", "log_softmax"}


def _scope_options(node: ast.BinOp):
    """A step applied to the wrong extent: f(a) * b written f(a * b), or as a * f(b) (SiLU after the product, on the
    other branch)."""
    for side, other in (("left", "right"), ("right", "left")):
        call = getattr(node, side)
        if isinstance(call, ast.Call) and _name(call) in _ELEMENTWISE and len(call.args) == 1 and _is_function_form(call):
            inner, rest = call.args[0], getattr(node, other)
            whole = ast.BinOp(inner, node.op, rest) if side == "left" else ast.BinOp(rest, node.op, inner)
            yield "scope", _call(call, args=[whole])
            moved = _call(call, args=[rest])
            yield "scope", ast.BinOp(inner, node.op, moved) if side == "left" else ast.BinOp(moved, node.op, inner)


def _slice_options(node: ast.Subscript):
    s = node.slice
    parts = s.elts if isinstance(s, ast.Tuple) else [s]
    for i, part in enumerate(parts):
        if isinstance(part, ast.Slice):
            for field in ("lower", "upper"):
                bound = getattr(part, field)
                if bound is None:
                    continue
                for op in (ast.Add(), ast.Sub()):
                    changed = ast.Slice(**{f: getattr(part, f) for f in ("lower", "upper", "step")})
                    value = _value(bound)
                    setattr(changed, field, _num(value + (1 if isinstance(op, ast.Add) else -1))
                            if isinstance(value, int) else ast.BinOp(bound, op, ast.Constant(1)))
                    new_parts = parts[:i] + [changed] + parts[i + 1:]
                    yield "off_by_one", ast.Subscript(node.value, ast.Tuple(new_parts, ast.Load())
                                                      if isinstance(s, ast.Tuple) else new_parts[0], node.ctx)


def _protected(stmt) -> bool:
    """Statements no rewrite removes: a docstring, super().__init__(), a raise."""
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant):
        return True
    text = _text(stmt)
    return "super()" in text or "Parameter(" in text or "register_buffer" in text


def _numeric_names(tree: ast.Module) -> dict:
    """Numbers a caller passes: each int or float argument of a function (and self.X stored from one), with
    the values a person may write in its place: its default first."""
    names: dict[str, tuple] = {}
    for func in ast.walk(tree):
        if not isinstance(func, ast.FunctionDef):
            continue
        args = func.args.args + func.args.kwonlyargs
        defaults = dict(zip([a.arg for a in func.args.args][::-1], func.args.defaults[::-1]))
        defaults.update({a.arg: d for a, d in zip(func.args.kwonlyargs, func.args.kw_defaults) if d is not None})
        for a in args:
            kind = getattr(a.annotation, "id", None)
            default = _value(defaults[a.arg]) if a.arg in defaults else None
            if kind not in ("int", "float") and default is None:
                continue
            kind = kind or ("float" if isinstance(default, float) else "int")
            values = tuple(dict.fromkeys(([default] if default is not None else []) + list(_WRITTEN_IN[kind])))
            names[a.arg] = values
        for node in ast.walk(func):  # self.eps = eps
            if isinstance(node, ast.Assign) and isinstance(node.value, ast.Name) and node.value.id in names:
                for target in node.targets:
                    if isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name) \
                            and target.value.id == "self":
                        names[f"self.{target.attr}"] = names[node.value.id]
    return names


def _bodies(tree: ast.Module):
    """(i, function) for the outermost functions: module-level ones and the methods of module-level classes, i the
    module statement that holds it."""
    for i, node in enumerate(tree.body):
        if isinstance(node, ast.FunctionDef):
            yield i, node
        elif isinstance(node, ast.ClassDef):
            yield from ((i, n) for n in node.body if isinstance(n, ast.FunctionDef))


def _sites(tree: ast.Module):
    """Every node inside a function body (not a docstring, not a while loop's), with where it hangs."""
    def walk(parent, top, func):
        for field, value in ast.iter_fields(parent):
            if isinstance(parent, ast.FunctionDef) and field in ("args", "decorator_list", "returns"):
                continue
            children = [(i, c) for i, c in enumerate(value)] if isinstance(value, list) else [(None, value)]
            for index, child in children:
                if not isinstance(child, ast.AST) or isinstance(child, (ast.While, ast.expr_context)):
                    continue
                if isinstance(child, ast.Expr) and isinstance(child.value, ast.Constant):
                    continue  # a docstring
                yield _Site(parent, field, index, child, top, func)
                yield from walk(child, top, func)

    for top, func in _bodies(tree):
        yield from walk(func, top, f"{top}.{func.name}")


def _local_names(func: ast.FunctionDef) -> list[str]:
    """The arguments and the variables a function assigns, in order of appearance."""
    names = [a.arg for a in func.args.args + func.args.kwonlyargs if a.arg != "self"]
    for node in ast.walk(func):
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
            names.append(node.id)
    return list(dict.fromkeys(names))


def _mask_polarity(tree: ast.Module):
    """Every mask a function applies, inverted at once (a mask read as True = hidden where True = visible is meant):
    the condition of each where() and the mask of each masked_fill(), ([sites], rule, None)."""
    for top, func in _bodies(tree):
        sites = []
        for node in ast.walk(func):
            if isinstance(node, ast.Call) and node.args and _name(node) in ("where", "masked_fill", "masked_fill_"):
                sites.append(_Site(node, "args", 0, node.args[0], top))
        if len(sites) > 1:  # one site alone is a rewrite of its own already
            yield sites, "mask", None


def _variables(tree: ast.Module):
    """A variable read where another of the same function belongs (grad for m_hat, x for x_hat): (site, rule, new)."""
    for top, func in _bodies(tree):
        names = _local_names(func)
        for node in ast.walk(func):
            for field, value in ast.iter_fields(node):
                children = list(enumerate(value)) if isinstance(value, list) else [(None, value)]
                for index, child in children:
                    if isinstance(child, ast.Name) and isinstance(child.ctx, ast.Load) and child.id in names:
                        for other in names:
                            if other != child.id:
                                yield _Site(node, field, index, child, top), "variable", ast.Name(other, ast.Load())


_CONSISTENT = ("axis", "keepdim", "unbiased", "function", "power")


def _consistent(items: list):
    """The same slip at every site of its kind in one function, made at once (the mean and the variance of a norm both
    taken over every axis, both keepdims dropped): ([sites], rule, [new at each])."""
    groups: dict = {}
    for site, rule, new in items:
        if rule in _CONSISTENT and isinstance(site, _Site) and isinstance(site.node, ast.Call) \
                and isinstance(new, ast.Call):
            groups.setdefault((site.func, rule, _change(site.node, new)), []).append((site, new))
    for (_, rule, _), members in groups.items():
        if len(members) > 1:
            yield [site for site, _ in members], rule, [new for _, new in members]


def _change(old: ast.Call, new: ast.Call) -> tuple:
    """What a rewrite of a call changes, whatever the call is applied to: its name, and each argument it changes."""
    olds = {**dict(enumerate(old.args)), **{k.arg: k.value for k in old.keywords}}
    news = {**dict(enumerate(new.args)), **{k.arg: k.value for k in new.keywords}}
    changed = tuple(sorted((str(key), _text(olds.get(key)) if key in olds else "", _text(news.get(key)) if key in news
                            else "") for key in olds.keys() | news.keys()
                           if key not in olds or key not in news or _text(olds[key]) != _text(news[key])))
    return _name(old), _name(new), changed


def _written_in(tree: ast.Module, numeric: dict):
    """A number the caller passes replaced, at every use in one function, by a value written in (clip_eps at both
    ends of a clamp by 0.2, d_model by 512, self.eps by 1e-12): ([sites], rule, new)."""
    for top, func in _bodies(tree):
        uses: dict[str, list] = {}
        for node in ast.walk(func):
            for field, value in ast.iter_fields(node):
                for index, child in (list(enumerate(value)) if isinstance(value, list) else [(None, value)]):
                    if not isinstance(child, (ast.Name, ast.Attribute)) or not isinstance(child.ctx, ast.Load):
                        continue
                    key = child.id if isinstance(child, ast.Name) else f"self.{child.attr}" \
                        if isinstance(child.value, ast.Name) and child.value.id == "self" else None
                    if key in numeric:
                        uses.setdefault(key, []).append(_Site(node, field, index, child, top))
        for key, sites in uses.items():
            for other in numeric[key]:
                yield sites, "written_in", _num(other)


class Rewrites:
    """The single rewrites of one module's source: compiled one at a time, the tree restored after each.

    stub: the source the user starts from (the kata's stub), where there is one. A class or function it already
    holds word for word is given, not written by the user (the layers a model kata composes), so no slip of the
    user's can be in it, and none is tried there: in a composite most of the reference is given, and its rewrites
    would cost most of the search's time and fit only by coincidence."""

    def __init__(self, source: str, filename: str, stub: str | None = None):
        self.tree = ast.parse(source)
        self.filename = filename
        self._codes = None
        self._pairs = None
        numeric = _numeric_names(self.tree)
        self.items: list[tuple[_Site, str, ast.AST | None]] = []
        for site in _sites(self.tree):
            for rule, new in _options(site.node, site):
                self.items.append((site, rule, new))
        self.items += list(_consistent(self.items))
        self.items += list(_written_in(self.tree, numeric))
        self.items += list(_mask_polarity(self.tree))
        self.items += list(_variables(self.tree))  # last: the most of them, and the budget may end first
        for top, body in _statement_lists(self.tree):  # two statements in the other order
            for i in range(len(body) - 1):
                a, b = body[i], body[i + 1]
                if isinstance(a, (ast.Assign, ast.AugAssign, ast.Expr)) and isinstance(b, (ast.Assign, ast.AugAssign, ast.Expr)) \
                        and not _protected(a) and not _protected(b):
                    self.items.append((_Site(body, "order", i, a, top), "order", b))
        given = _given(self.tree, source, stub)
        self.items = [item for item in self.items if not all(site.top in given for site in _each(item[0]))]

        # The likeliest slips first, so that a search the budget ends early has tried them: rewrites inside
        # __init__ last (the weights are loaded afterwards, so few of them change anything).
        in_init = {id(n) for _, func in _bodies(self.tree) if func.name == "__init__" for n in ast.walk(func)}
        self.items.sort(key=lambda item: (id(_each(item[0])[0].node) in in_init, _PRIORITY.get(item[1], 9)))

    def __len__(self) -> int:
        return len(self.items)

    def pairs_in_one_statement(self) -> list[tuple[int, int]]:
        """(a, b), a < b: two rewrites of the terms and numbers of one arithmetic statement (a formula written with
        two slips, a count with two of its terms left out), which need not come near the user's outputs alone."""
        if self._pairs is None:
            by_statement: dict = {}
            for k, (site, rule, _) in enumerate(self.items):
                if rule in _FORMULA and not isinstance(site, list):
                    holder = _holder(self.tree.body[site.top], site.node)
                    if isinstance(holder, (ast.Assign, ast.AugAssign, ast.Return)):
                        by_statement.setdefault(id(holder), []).append(k)
            self._pairs = [(a, b) for ks in by_statement.values() for i, a in enumerate(ks) for b in ks[i + 1:]]
        return self._pairs

    def describe(self, k: int) -> Rewrite:
        site, rule, new = self.items[k]
        several = isinstance(site, list)
        # every use of one name: said where it is used last; every mask: said where it is applied first
        site = (site[0] if rule == "mask" else site[-1]) if several else site
        new = new[-1] if isinstance(new, list) else new  # the last site's, as the site said
        node = site.node
        anchor = _anchor(node, new, rule)
        if rule == "order":
            before = f"{_text(node)}; {_text(new)}"
            after = f"{_text(new)}; {_text(node)}"
        elif several or isinstance(node, (ast.Name, ast.Attribute, ast.Constant)) or _value(node) is not None \
                or (len(_text(node)) < 30 and new is not None and not isinstance(node, ast.stmt)):
            # a name, a number or a short fragment (x - mean, of which there may be two) says little: show the
            # statement that holds it, before and after
            holder = _holder(self.tree.body[site.top], node)
            anchor = _anchor(node, new, rule, holder)
            # the same slip at every site of its kind: every statement that holds one, in order
            holders = list({id(h): h for h in (_holder(self.tree.body[one.top], one.node)
                                               for one in self.items[k][0])}.values()) \
                if several and rule in _CONSISTENT else [holder]
            before = "; ".join(_text(h) for h in holders)
            restore = _apply(self.items[k][0], rule, self.items[k][2])
            try:  # not in a statement (a for's range): the fragment itself
                after = "; ".join(_text(h) for h in holders) if holder is not node else _text(new)
            finally:
                restore()
            if anchor and anchor[0][0] == "value":  # unparse writes -1e9 as -1000000000.0
                after = after.replace(ast.unparse(_num(anchor[0][1])), _shown(anchor[0][1]))
        else:
            before, after = _text(node), (_text(new) if new is not None else "")
        holder = _holder(self.tree.body[site.top], node)
        restore = _apply(self.items[k][0], rule, self.items[k][2])
        try:
            changed = ast.unparse(holder) if rule != "order" and holder is not node else after
        finally:
            restore()
        return Rewrite(rule, getattr(node, "lineno", 0), before, after, anchor, changed)

    def describe_pair(self, a: int, b: int) -> list[Rewrite]:
        """Two rewrites, said one by one; or, when one statement holds both, as one: that statement before and after."""
        sites = [_each(self.items[k][0]) for k in (a, b)]
        if len(sites[0]) > 1 or len(sites[1]) > 1:
            return [self.describe(a), self.describe(b)]
        holders = [_holder(self.tree.body[one[0].top], one[0].node) for one in sites]
        rules = {self.items[k][1] for k in (a, b)}
        if holders[0] is not holders[1] or not isinstance(holders[0], ast.stmt) \
                or len(rules) > 1 and not rules <= _FORMULA:
            return [self.describe(a), self.describe(b)]
        before = _text(holders[0])
        restores = [_apply(*self.items[k]) for k in (a, b)]
        try:
            after = _text(holders[0])
        finally:
            for restore in reversed(restores):
                restore()
        anchor = self.describe(b).anchor + self.describe(a).anchor
        rule = rules.pop() if len(rules) == 1 else "formula"  # the same slip twice keeps its concept
        return [Rewrite(rule, holders[0].lineno, before, after, anchor, after, changes=2)]

    def module(self, ks, name: str) -> types.ModuleType | None:
        """The reference's module with rewrite k (or each of a tuple of them) applied, or None when it does not
        compile or import. Only the module statements that hold a rewrite are compiled again; the others' code is
        compiled once."""
        ks = (ks,) if isinstance(ks, int) else ks
        if self._codes is None:
            self._codes = [compile(ast.Module([stmt], []), self.filename, "exec") for stmt in self.tree.body]
        restores, changed = [], {}
        try:
            for k in ks:
                site, rule, new = self.items[k]
                restores.append(_apply(site, rule, new))
            with warnings.catch_warnings():  # `x is 0` of a rewrite: a SyntaxWarning on the user's terminal otherwise
                warnings.simplefilter("ignore")
                for top in {site.top for k in ks for site in _each(self.items[k][0])}:
                    changed[top] = compile(ast.Module([self.tree.body[top]], []), self.filename, "exec")
        except (SyntaxError, ValueError, TypeError, IndexError):
            return None
        finally:
            for restore in reversed(restores):
                restore()
        module = types.ModuleType(name)
        module.__file__ = self.filename
        try:
            with contextlib.redirect_stdout(io.StringIO()):
                for i, each in enumerate(self._codes):
                    exec(changed.get(i, each), module.__dict__)  # noqa: S102 - the project's own reference
        except Exception:  # noqa: BLE001
            return None
        return module


def _statement_lists(tree):
    for top, func in _bodies(tree):
        for node in ast.walk(func):
            for field in ("body", "orelse"):
                body = getattr(node, field, None)
                if isinstance(body, list) and not isinstance(node, ast.While):
                    yield top, body


def _holder(top: ast.AST, node: ast.AST) -> ast.AST:
    """The innermost simple statement (or if/while test) that holds node."""
    best = node
    for stmt in ast.walk(top):
        if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Expr)):
            if any(n is node for n in ast.walk(stmt)):
                best = stmt
        elif isinstance(stmt, (ast.If, ast.While)) and any(n is node for n in ast.walk(stmt.test)):
            best = stmt.test
    return best


def _each(site) -> list:
    return site if isinstance(site, list) else [site]


def _apply(site, rule: str, new):
    """Put the rewrite in the tree (at one site, or at each of a list); return the function that takes it out."""
    if isinstance(site, list):  # new: one node for every site (copied), or one for each; None: each site negated
        news = new if isinstance(new, list) else [copy.deepcopy(new) if new is not None else _negated(one.node)
                                                  for one in site]
        restores = [_apply(one, rule, each) for one, each in zip(site, news)]
        return lambda: [restore() for restore in reversed(restores)]
    if rule == "order":
        body, i = site.parent, site.index
        body[i], body[i + 1] = body[i + 1], body[i]
        return lambda: body.__setitem__(slice(i, i + 2), [body[i + 1], body[i]])
    old = site.node
    if new is None:
        new = ast.Pass()
    ast.fix_missing_locations(ast.copy_location(new, old))
    if site.index is None:
        setattr(site.parent, site.field, new)
        return lambda: setattr(site.parent, site.field, old)
    getattr(site.parent, site.field)[site.index] = new
    return lambda: getattr(site.parent, site.field).__setitem__(site.index, old)


def _shown(value) -> str:
    """A number as a person writes it: 1e-12, -1e9, 512, 0.5, float('-inf')."""
    if isinstance(value, float) and math.isinf(value):
        return "float('-inf')" if value < 0 else "float('inf')"
    if isinstance(value, int):
        return repr(value)
    text = f"{value:g}".replace("e+0", "e").replace("e-0", "e-").replace("e+", "e")
    return text if any(c in text for c in ".e") else text + ".0"


def _anchor(node, new, rule, holder=None) -> tuple:
    """What the user's code most likely holds where the slip is, best first: the new number, the call's name, the
    name of the call around it."""
    found = []
    if rule in ("constant", "written_in", "off_by_one") and new is not None and _value(new) is not None:
        found.append(("value", _value(new)))
    call = node if isinstance(node, ast.Call) and _value(node) is None else new if isinstance(new, ast.Call) else None
    if call is not None and _name(call):
        found.append(("call", _name(new) if rule == "mask" and isinstance(new, ast.Call) and _name(new) in _TRIANGLES
                      else _name(call)))
    around = [n for n in ast.walk(holder) if isinstance(n, ast.Call) and n is not node
              and any(m is node for m in ast.walk(n))] if holder is not None else []
    if around:  # the innermost call that holds it: ratio.clamp(1 - clip_eps, ...) for clip_eps
        innermost = min(around, key=lambda n: len(list(ast.walk(n))))
        if _name(innermost):
            found.append(("call", _name(innermost)))
    return tuple(found)


# ----------------------------------------------------------------------------- the search


@contextlib.contextmanager
def _deadline(seconds: float):
    """Stop a rewrite that runs too long (a loop it made endless); where there is no alarm, nothing is stopped
    (the rewrites leave while loops alone, so a loop always ends)."""
    if not hasattr(signal, "setitimer") or threading.current_thread() is not threading.main_thread():
        yield
        return

    def stop(signum, frame):
        raise TimeoutError

    def quiet(unraisable):  # the alarm landed in a weakref or __del__ callback, which cannot raise: not the user's
        if not isinstance(unraisable.exc_value, TimeoutError):
            hook(unraisable)

    previous, hook = signal.signal(signal.SIGALRM, stop), sys.unraisablehook
    sys.unraisablehook = quiet
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        sys.unraisablehook = hook


def search(solution, run, cases: list, got: dict, same, budget: float, key=None,
           found: list | None = None) -> list[list[Rewrite]]:
    """The changes to the reference (one rewrite, or else two) whose outputs equal the user's on every case where
    the user's are wrong and the reference's where the user's are right.

    run(module, case) -> outputs: the rewritten reference called as the check calls it; got: case id -> the user's
    outputs (a case the user's code could not run is left out); same(a, b) -> bool: the check's comparison; cases:
    the failing one first. Single rewrites first; then pairs of the singles that came closest to the user's
    outputs on the failing case, while the budget (seconds of CPU) lasts. key: what run computes, where that depends
    on the rewrite and the case alone (a check module's own numerics): its outputs are then kept (OUTPUTS) for the
    next file of the same kata, a re-check in watch or the server, and the next search of this one. found: the
    changes (a rewrite's index, or a pair of them) that earlier searches of the same file said; those that fit here
    are said without a search (one file's failing checks mostly show one mistake), and what this one says is added."""
    path = getattr(solution, "__file__", None)
    first = cases[0]
    if not path or not _evidence(got[first.id]) or sum(_evidence(got[c.id]) for c in cases if c.id in got) < EVIDENCE:
        return []
    rewrites = _parsed(path, getattr(solution, "__stub__", None))
    start, fits, near = time.process_time(), [], []  # CPU time: a busy machine slows the search, not what it finds
    others = [c for c in cases[1:] if c.id in got and c.id != first.id]
    name = f"{solution.__name__}_rewrite"

    def outputs(ks, case):
        kept = (key, path, ks, case.id, repr(case.dims), repr(case.extra))  # a case resized keeps its id
        if key is not None and kept in OUTPUTS:
            return OUTPUTS[kept]
        module = rewrites.module(ks, name)
        value = _FAILED if module is None else _ran(run, module, case)
        if key is not None:
            if len(OUTPUTS) >= MAX_KEPT:
                OUTPUTS.clear()
            OUTPUTS[kept] = value
        return value

    def fits_everywhere(ks) -> bool:
        return all(_fits(outputs(ks, c), c, got, same)[0] for c in [first, *others])

    def said(changes: list, only_one: bool = False) -> list[list[Rewrite]]:
        """What changes say (none where they do not single one out, or, only_one, are not one), kept in found."""
        result = _distinct([[rewrites.describe(ks)] if isinstance(ks, int) else rewrites.describe_pair(*ks)
                            for ks in changes])
        result = [] if only_one and len(result) != 1 else result
        if result and found is not None:
            found.extend(ks for ks in changes if ks not in found)
        return result

    known = said([ks for ks in found or () if fits_everywhere(ks)])
    if known:
        return known
    budget *= 0.9  # checked between rewrites: the last one may run past it
    for k in range(len(rewrites)):
        if time.process_time() - start > budget:
            return said(fits)
        ok, distance = _fits(outputs(k, first), first, got, same)
        if ok and all(_fits(outputs(k, c), c, got, same)[0] for c in others):
            fits.append(k)
        elif distance is not None:
            near.append((distance, k))
    if fits:
        return said(fits)
    # Pairs leave out a variable read for another: with two changes it fits by coincidence too often (V.size(-2) for
    # K.size(-2)); and a pair is said only when it is the one pair that fits.
    near = [k for _, k in sorted(near) if rewrites.items[k][1] != "variable"][:PAIRED]
    tried, pairs = set(), []
    for a, b in [(a, b) for i, a in enumerate(near) for b in near[i + 1:]] + rewrites.pairs_in_one_statement():
        if (a, b) in tried:
            continue
        tried.add((a, b))
        if time.process_time() - start > budget:
            return []  # the pairs not all tried: what fits so far may not be the only fit
        if _each(rewrites.items[a][0])[0].node is not _each(rewrites.items[b][0])[0].node \
                and fits_everywhere((a, b)):
            pairs.append((a, b))
    return said(pairs, only_one=True)


_FORMULA = {"term", "off_by_one", "operands", "operator", "division"}  # the rules of one formula's slips
PAIRED = 12  # the singles that come nearest the user's outputs, tried two at a time
# The finite numbers the user's outputs must hold, over all the cases compared, before any rewrite is said: one
# number (a loss, a learning rate) is met by a written-in 512 as easily as by the mistake itself ((2·64)^-0.5 equals
# 2·512^-0.5), and outputs that are NaN throughout are met by any rewrite that makes NaN.
EVIDENCE = 3


def _evidence(value) -> int:
    """How many finite numbers the outputs hold (tensors, arrays and Python numbers, in tuples and lists), or the
    numbers an error's text holds (sizes, an index)."""
    if isinstance(value, Raised):
        return len(re.findall(r"\d+", value.text))
    if isinstance(value, (tuple, list)):
        return sum(_evidence(v) for v in value)
    if isinstance(value, bool):
        return 0
    if isinstance(value, (int, float)):
        return int(math.isfinite(value))
    if hasattr(value, "shape") and hasattr(value, "dtype"):
        array = np.asarray(value.detach().cpu() if hasattr(value, "detach") else value)
        return int(np.isfinite(array).sum()) if array.dtype.kind in "fc" else int(array.size)
    return 0


# The outputs of the rewrites searched with a key, by (key, reference file, rewrite(s), case id): a kata's rewrites
# give the same outputs whoever's file is checked. A few MB for the largest kata; emptied past MAX_KEPT entries.
OUTPUTS: dict = {}
MAX_KEPT = 50_000
_FAILED = object()  # a rewrite that does not compile or cannot run on the case


class Raised(NamedTuple):
    """An error as an output. A rewrite fits a case where the user's code raised when it raises the same error, word
    for word (torch's and NumPy's texts hold the sizes: "The size of tensor a (6) must match the size of tensor b (2)
    at non-singleton dimension 3")."""

    kind: str  # the error's type's name
    text: str


def _ran(run, module, case):
    """The rewritten reference's outputs on case, the error it raised (Raised), or _FAILED (stopped for its time)."""
    try:
        with quietly(MUTANT_SECONDS):
            return run(module, case)
    except TimeoutError:
        return _FAILED
    except Exception as exc:  # noqa: BLE001 - a rewrite that raises fits only where the user's code raised the same
        return Raised(type(exc).__name__, str(exc))


@contextlib.contextmanager
def quietly(seconds: float):
    """Run a rewritten reference in this process: stopped after seconds (TimeoutError), its prints, warnings and
    floating-point warnings kept from the terminal (a Linear of zero features is not the user's), and torch's grad
    mode and default dtype put back after (the deadline may stop it inside torch.no_grad()'s exit)."""
    import torch

    grad, dtype = torch.is_grad_enabled(), torch.get_default_dtype()
    try:
        with np.errstate(all="ignore"), _deadline(seconds), contextlib.redirect_stdout(io.StringIO()), \
                warnings.catch_warnings():
            warnings.simplefilter("ignore")
            yield
    finally:
        torch.set_grad_enabled(grad)
        torch.set_default_dtype(dtype)


def _fits(value, case, got, same) -> tuple[bool, float | None]:
    """(whether the rewritten reference's value on case is the user's outputs, how far it is from them)."""
    if value is _FAILED:
        return False, None
    if isinstance(value, Raised) or isinstance(got[case.id], Raised):
        return isinstance(value, Raised) and isinstance(got[case.id], Raised) and value == got[case.id], None
    try:
        if same(got[case.id], value):
            return True, 0.0
        return False, _distance(got[case.id], value)
    except Exception:  # noqa: BLE001 - a rewrite's value of another kind (a float for an array) is no fit
        return False, None


def _distance(a, b) -> float | None:
    """Mean absolute difference over the float outputs, None where the forms differ."""
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    if len(a) != len(b):
        return None
    total = 0.0
    for x, y in zip(a, b):
        if not (hasattr(x, "shape") and hasattr(y, "shape")) or tuple(x.shape) != tuple(y.shape):
            return None
        with np.errstate(all="ignore"):  # inf - inf: a NaN, counted below; a warning would reach the terminal
            diff = np.abs(np.asarray(x, dtype=np.float64) - np.asarray(y, dtype=np.float64))
        total += float(np.nan_to_num(diff, nan=1e6, posinf=1e6).mean()) if diff.size else 0.0
    return total


_PARSED: dict = {}


def _parsed(path: str, stub: str | None = None) -> Rewrites:
    """The rewrites of the reference at path; stub: the path of the kata's stub, where it has one."""
    if path not in _PARSED:
        with open(path, encoding="utf-8") as f:
            source = f.read()
        given = None
        if stub:
            try:
                with open(stub, encoding="utf-8") as f:
                    given = f.read()
            except OSError:
                pass
        _PARSED[path] = Rewrites(source, path, given)
    return _PARSED[path]


def _given(tree: ast.Module, source: str, stub: str | None) -> set[int]:
    """The indices of the module's classes and functions that the stub holds word for word."""
    if not stub:
        return set()
    try:
        held = {ast.get_source_segment(stub, node) for node in ast.parse(stub).body}
    except SyntaxError:
        return set()
    return {i for i, node in enumerate(tree.body)
            if isinstance(node, (ast.ClassDef, ast.FunctionDef)) and ast.get_source_segment(source, node) in held}


def _distinct(fits: list[list[Rewrite]]) -> list[list[Rewrite]]:
    """One entry per change (a change: one rewrite, or a pair); none when more than MAX_FITS different changes fit.
    A number written in at two sites (self.eps = 1e-12 where it is stored, or 1e-12 where it is used) is one
    change: the first found is said, the use (rewrites inside __init__ are tried last)."""
    kinds: dict = {}
    written: set = set()  # the rewritten statements said already: two rules that write the same are one change
    # one variable read for another, where leaving an argument of that statement out gives the same outputs: the
    # simpler change is said (max(seq_len, head_dim) fits wherever seq_len alone does, while seq_len >= head_dim)
    left_out = {change[0].line for change in fits if len(change) == 1 and change[0].rule == "argument"}
    fits = [change for change in fits if not (len(change) == 1 and change[0].rule == "variable"
                                              and change[0].line in left_out)]
    for change in fits:
        # two values at one site that give the same outputs (dim=1 and dim=-2 on a tensor of rank 3) are one change;
        # two numbers are not (1e-12 and 0 differ on a constant row, even where the cases cannot tell them apart)
        key = tuple((r.rule, r.anchor[:1]) if r.rule in ("constant", "written_in") else (r.rule, r.line, r.before)
                    for r in change)
        program = tuple((r.line, r.changed) for r in change)
        if key in kinds or program in written:  # the first is said: rewrites inside __init__ come last
            continue
        kinds[key] = change
        written.add(program)
    return list(kinds.values()) if len(kinds) <= MAX_FITS else []


def sentence(rewrite: Rewrite) -> str:
    if rewrite.rule in ("statement", "step") and not rewrite.after:
        return t("{concept}: the reference's `{before}` is missing from yours", concept=CONCEPTS[rewrite.rule](),
                 before=rewrite.before)
    return t("{concept}: where the reference has `{before}`, yours behaves as `{after}`",
             concept=CONCEPTS[rewrite.rule](), before=rewrite.before, after=rewrite.after)


def explain(fits: list[list[Rewrite]], raised: bool = False) -> str | None:
    """'your outputs equal the reference's with one change, ...', or with two; several fits joined by 'or'.
    raised: the user's code raised, and the changed reference raises the same error."""
    said = []
    for change in fits:
        parts = t("; and ").join(sentence(r) for r in change)
        one = len(change) == 1 and change[0].changes == 1
        if raised:
            said.append(t("the reference raises your error too with one change, {change}", change=parts) if one
                        else t("the reference raises your error too with two changes, {changes}", changes=parts))
            continue
        said.append(t("your outputs equal the reference's with one change, {change}", change=parts) if one
                    else t("your outputs equal the reference's with two changes, {changes}", changes=parts))
    return t("; or ").join(said) if said else None


def locate(source: str | None, fits: list[list[Rewrite]]) -> int | None:
    """The one line of the user's code that holds what the rewrite changed (a number with the new value, a call of the
    same name, the call around it), by the first of these that exactly one line holds."""
    if not source or len(fits) != 1:
        return None
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    for kind, what in fits[0][-1].anchor:
        lines = set()
        for node in ast.walk(tree):
            if kind == "value" and isinstance(node, (ast.Constant, ast.UnaryOp, ast.Call)) and _value(node) is not None:
                if _value(node) == what and isinstance(_value(node), float) == isinstance(what, float):
                    lines.add(node.lineno)
            elif kind == "call" and isinstance(node, ast.Call) and _name(node) == what:
                lines.add(node.lineno)
        if len(lines) == 1:
            return lines.pop()
    return None
