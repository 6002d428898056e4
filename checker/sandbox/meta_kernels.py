"""torch's meta kernels without torch._dynamo: the device check's cold cost.

The device check runs the user's code on the meta device. torch runs many meta kernels in Python
(torch._refs, torch._meta_registrations), each wrapped by torch._disable_dynamo, whose first call
imports torch._dynamo (about 0.8 s of the 1.1 s a fresh process paid for its first meta call) only
to mark the kernel "never traced by torch.compile", and caches the marked kernel on the kernel
itself. Nothing in a check is compiled, so the marked kernel is the kernel: set ahead, the same
kernel runs and raises the same errors, and torch._dynamo is never imported.

What was left is torch.fx.experimental.symbolic_shapes (sympy, about 0.3 s), which torch._check and the strides of
every new meta tensor import for a handful of helpers (expect_true, is_nested_int, ...). On the concrete sizes of a
check those helpers return their argument, or False: without_symbolic_shapes() puts a module in its place that
answers them so, and imports the real one for a symbolic number or for any other name.
"""

from __future__ import annotations

import gc
import importlib
import operator
import sys
import types


def without_dynamo() -> int:
    """Mark every meta kernel wrapped so far as its own dynamo-disabled self; returns how many were marked.
    Where torch is built otherwise (no such wrapper), nothing is marked and the first meta call imports
    torch._dynamo as before."""
    try:
        import torch._compile

        inner = next(c for c in torch._compile._disable_dynamo.__code__.co_consts
                     if isinstance(c, types.CodeType) and c.co_name == "inner")
        at = inner.co_freevars.index("fn")
    except Exception:  # noqa: BLE001 - another torch: its kernels import torch._dynamo themselves
        return 0
    marked = 0
    for obj in gc.get_objects():  # about 40 ms: the wrappers are closures, held by many tables
        if type(obj) is types.FunctionType and obj.__code__ is inner:
            kernel = obj.__closure__[at].cell_contents
            if getattr(kernel, "__dynamo_disable", None) is None:
                try:
                    kernel.__dynamo_disable = kernel
                except (AttributeError, TypeError):  # a kernel that takes no attribute: left as it is
                    continue
                marked += 1
    return marked


_SHAPES = "torch.fx.experimental.symbolic_shapes"


def _plain(value) -> bool:
    """A concrete Python number or bool, or a tuple or list of them: no SymInt, SymBool or SymFloat inside."""
    if type(value) in (bool, int, float):
        return True
    return isinstance(value, (tuple, list)) and all(_plain(v) for v in value)


def _real():
    if isinstance(sys.modules.get(_SHAPES), _Light):
        del sys.modules[_SHAPES]
    if isinstance(sys.modules.get("sympy"), _NoSympy):  # the real module imports the real sympy
        del sys.modules["sympy"]
    return importlib.import_module(_SHAPES)


def _same_bool(name):
    """expect_true, guard_or_false, ...: a concrete bool is returned as it is; anything else goes to torch's own."""
    def helper(a, *rest, **how):
        return a if type(a) is bool else getattr(_real(), name)(a, *rest, **how)
    return helper


def _fold(op, name, x, others):
    if not _plain((x, *others)):
        return getattr(_real(), name)(x, *others)
    for y in others:
        x = op(x, y)
    return x


def _sym_eq(x, y):
    if _plain(x) and _plain(y) and (isinstance(x, (tuple, list)) == isinstance(y, (tuple, list))):
        if isinstance(x, (tuple, list)):
            return len(x) == len(y) and all(_sym_eq(a, b) for a, b in zip(x, y))
        if type(x) is int and type(y) is int:
            return x == y
    return _real().sym_eq(x, y)


_HELPERS = {
    **{name: _same_bool(name) for name in ("expect_true", "guard_size_oblivious", "statically_known_true",
                                           "guard_or_false", "guard_or_true", "guard_bool")},
    "guard_int": lambda a: a if type(a) is int else _real().guard_int(a),
    "is_nested_int": lambda s: False if _plain(s) else _real().is_nested_int(s),
    "is_concrete_int": lambda a: True if type(a) is int else _real().is_concrete_int(a),
    "is_concrete_bool": lambda a: True if type(a) is bool else _real().is_concrete_bool(a),
    "sym_eq": _sym_eq,
    "has_guarding_hint": lambda a: True if _plain(a) else _real().has_guarding_hint(a),
    "guarding_hint_or_throw": lambda a: a if type(a) in (bool, int) else _real().guarding_hint_or_throw(a),
    "sym_and": lambda x, *others: _fold(operator.and_, "sym_and", x, others),
    "sym_or": lambda x, *others: _fold(operator.or_, "sym_or", x, others),
}


class _Light(types.ModuleType):
    """symbolic_shapes as the device check needs it: the helpers above, and the real module for any other name."""

    def __getattr__(self, name):
        if name.startswith("__"):  # the import system's questions (__path__): a module, not a package
            raise AttributeError(name)
        return _HELPERS[name] if name in _HELPERS else getattr(_real(), name)


class _NoSympyObject:
    """What isinstance(x, sympy.Basic) is asked against while sympy is not imported: no object is one."""


class _NoSympy(types.ModuleType):
    """sympy as torch's dtype promotion asks it, isinstance(x, sympy.Basic): no sympy object exists before sympy is
    imported, so a class of its own answers False; any other name imports the real sympy, and from then on Basic
    too is the real one (for whoever kept this module)."""

    def __getattr__(self, name):
        if name.startswith("__"):
            raise AttributeError(name)
        if name == "Basic" and isinstance(sys.modules.get("sympy"), _NoSympy):
            return _NoSympyObject
        if isinstance(sys.modules.get("sympy"), _NoSympy):
            del sys.modules["sympy"]
        return getattr(importlib.import_module("sympy"), name)


def without_symbolic_shapes() -> bool:
    """Put the light modules in place of torch.fx.experimental.symbolic_shapes and of sympy, unless the real ones
    are imported already; True if both are in place."""
    if _SHAPES in sys.modules or "sympy" in sys.modules:
        return isinstance(sys.modules.get(_SHAPES), _Light) and isinstance(sys.modules.get("sympy"), _NoSympy)
    sys.modules[_SHAPES] = light = _Light(_SHAPES)
    sys.modules["sympy"] = _NoSympy("sympy")
    parent = sys.modules.get(_SHAPES.rpartition(".")[0])
    if parent is not None:  # torch.fx.experimental.symbolic_shapes read as an attribute finds it too
        setattr(parent, "symbolic_shapes", light)
    return True
