"""Records the calls of a module's given sub-parts (attention, norms, FFN, ...): what each received.

The same recorder runs on the user's module in the child (through Kit.drive) and on the reference
in the parent, with the same weights and inputs; kit.first_divergence compares the two. Like every
driver it returns plain values and judges nothing.
"""

import sys

import torch

from checker.sandbox.modules import load_state


def recorded_forward(module: torch.nn.Module, parts: tuple, args: tuple, source: str | None = None) -> dict:
    """Run module(*args) with forward hooks on the named sub-modules it has.

    Returns {"calls": [[name, [tensor arguments, positional then keyword], output, line], ...] in call
    order, "missing": [names the module does not have]}; the output is the first tensor a call
    returned, the line the one in the file `source` that made the call (None without a source).
    """
    calls, handles, missing = [], [], []

    def caller_line() -> int | None:
        frame = sys._getframe(2)
        while frame is not None and frame.f_code.co_filename != source:
            frame = frame.f_back
        return None if frame is None else frame.f_lineno

    def hook(name):
        def record(_module, positional, keywords, output):
            tensors = [a for a in (*positional, *keywords.values()) if isinstance(a, torch.Tensor)]
            first = output if isinstance(output, torch.Tensor) else next(
                (o for o in output if isinstance(o, torch.Tensor)), None) if isinstance(output, (tuple, list)) else None
            calls.append([name, [a.detach().clone() for a in tensors], None if first is None else first.detach().clone(),
                          caller_line() if source else None])
        return record

    for name in parts:
        try:
            sub = module.get_submodule(name)
        except AttributeError:
            sub = _argument_module(module, name, args)
        if sub is None:
            missing.append(name)
            continue
        handles.append(sub.register_forward_hook(hook(name), with_kwargs=True))
    try:
        with torch.no_grad():
            module(*args)
    finally:
        for handle in handles:
            handle.remove()
    return {"calls": calls, "missing": missing}


def _argument_module(module: torch.nn.Module, name: str, args: tuple) -> torch.nn.Module | None:
    """The module passed to forward as the argument `name` (AddNorm's sublayer), else the only module argument."""
    import inspect

    try:
        value = inspect.signature(module.forward).bind(*args).arguments.get(name)
    except (TypeError, ValueError):
        value = None
    given = [a for a in args if isinstance(a, torch.nn.Module)]
    return value if isinstance(value, torch.nn.Module) else given[0] if len(given) == 1 else None


def record_user(user, target: str, init: dict, state: dict, args: tuple, parts: tuple) -> dict:
    """The user's module built from init with the given weights, in eval mode, recorded."""
    module = getattr(user, target)(**init).double()
    load_state(module, state)
    module.eval()
    return recorded_forward(module, parts, args, source=user.__file__)


# ----------------------------------------------------------------------------- the NumPy track
# The given sub-parts are plain functions the user's function looks up by name in its module (the NumPy tutorial:
# multi_head_attention, add_and_norm, ...), or objects whose forward the user's class calls (the paper walkthrough:
# self.attention.forward, self.norm1.forward, ...). Both are recorded by wrapping them for one call.


def _arrays(values) -> list:
    """The arrays among values, copied (a later in-place edit must not change what was recorded)."""
    import numpy as np

    return [v.copy() for v in values if isinstance(v, np.ndarray)]


def _first_array(value):
    import numpy as np

    if isinstance(value, np.ndarray):
        return value.copy()
    if isinstance(value, (tuple, list)):
        return next((v.copy() for v in value if isinstance(v, np.ndarray)), None)
    return None


def _recording(name: str, fn, calls: list, source: str | None):
    """fn wrapped: each call appends [name, [array arguments], first array returned, the caller's line,
    [the parameter name of each array argument]]."""
    import inspect

    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError):
        signature = None

    def names(args, kwargs) -> list:
        import numpy as np

        try:
            bound = signature.bind(*args, **kwargs).arguments
        except (AttributeError, TypeError):
            return []
        return [k for k, v in bound.items() if isinstance(v, np.ndarray)]

    def wrapper(*args, **kwargs):
        line = None
        if source:
            frame = sys._getframe(1)
            while frame is not None and frame.f_code.co_filename != source:
                frame = frame.f_back
            line = None if frame is None else frame.f_lineno
        entry = [name, _arrays((*args, *kwargs.values())), None, line, names(args, kwargs)]
        calls.append(entry)  # at the call, so a part called inside another comes after it, as in the code
        out = fn(*args, **kwargs)
        entry[2] = _first_array(out)
        return out

    return wrapper


def record_numpy(user, target: str, parts: tuple, args: tuple, init: dict | None = None,
                 weights: dict | None = None) -> dict:
    """Call target(*args) (a function), or target(**init) with weights set by attribute path and then its
    forward(*args) (a class), with the named given parts recorded: module functions by name, or the
    forward of the named attributes. Returns {"calls": [...], "missing": [names]}, as recorded_forward."""
    from checker.checks.child.numpy_classes import _MISSING, _get, set_path

    calls, missing = [], []
    source = getattr(user, "__file__", None)
    fn = getattr(user, target)
    if isinstance(fn, type):
        obj = fn(**(init or {}))
        for path, value in (weights or {}).items():
            set_path(obj, path, value.copy())
        for name in parts:
            owner = _get(obj, name)
            if owner is _MISSING or not callable(getattr(owner, "forward", None)):
                missing.append(name)
                continue
            owner.forward = _recording(name, owner.forward, calls, source)  # an instance attribute: this object only
        obj.forward(*args)
        return {"calls": calls, "missing": missing}
    saved = {}
    for name in parts:
        if callable(user.__dict__.get(name)):
            saved[name] = user.__dict__[name]
            setattr(user, name, _recording(name, saved[name], calls, source))
        else:
            missing.append(name)
    try:
        fn(*args)
    finally:
        for name, original in saved.items():
            setattr(user, name, original)
    return {"calls": calls, "missing": missing}
