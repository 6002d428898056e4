"""Drivers for NumPy class katas: build the user's object in the child, set its weights by name, call it.

The harness loads weights into torch modules with load_state_dict; a NumPy class has no state_dict,
so these drivers do the same by attribute path ("attention.W_q" -> block.attention.W_q). Like every
driver they return plain values and judge nothing: a missing attribute is reported back as data
for the parent to explain. Called through kit.drive(numpy_classes.NAME, ...).
"""

from __future__ import annotations

import inspect

import numpy as np

_MISSING = object()


def _get(obj, path: str):
    for part in path.split("."):
        obj = getattr(obj, part, _MISSING)
        if obj is _MISSING:
            return _MISSING
    return obj


def set_path(obj, path: str, value) -> None:
    """obj.<path> = value, for a dotted attribute path ("attention.W_q")."""
    *owners, name = path.split(".")
    for part in owners:
        obj = getattr(obj, part)
    setattr(obj, name, value)


def _describe(value):
    """What sits at an attribute path: its shape if it is an array, else its type name."""
    if value is _MISSING:
        return None
    if isinstance(value, np.ndarray):
        return list(value.shape)
    return type(value).__name__


def layout(user, target: str, init: dict, names: list[str]) -> dict:
    """Build target(**init) and describe each named attribute, plus forward's parameters."""
    obj = getattr(user, target)(**init)
    forward = getattr(obj, "forward", None)
    try:
        params = [p for p in inspect.signature(forward).parameters] if callable(forward) else None
    except (TypeError, ValueError):
        params = None
    return {"attributes": {n: _describe(_get(obj, n)) for n in names}, "forward": params}


def build_and_call(user, target: str, init: dict, weights: dict, args: tuple, method: str = "forward",
                   part: str = "") -> dict:
    """target(**init), weights assigned by attribute path, then obj[.part].method(*args).

    Returns {"missing": [paths]} when an attribute to overwrite does not exist after construction;
    else {"output": value, "args_after": args} (args_after: to check the inputs were not modified).
    """
    obj = getattr(user, target)(**init)
    missing = [n for n in weights if _get(obj, n) is _MISSING]
    if missing:
        return {"missing": missing}
    for name, value in weights.items():
        set_path(obj, name, value.copy())
    callee = _get(obj, part) if part else obj
    output = getattr(callee, method)(*args)
    return {"output": output, "args_after": list(args)}
