"""Records the calls of a module's given sub-parts (attention, norms, FFN, ...): what each received.

The same recorder runs on the user's module in the child (through Kit.drive) and on the reference
in the parent, with the same weights and inputs; kit.first_divergence compares the two. Like every
driver it returns plain values and judges nothing.
"""

import sys

import torch


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


def record_user(user, target: str, init: dict, state: dict, args: tuple, parts: tuple) -> dict:
    """The user's module built from init with the given weights, in eval mode, recorded."""
    module = getattr(user, target)(**init).double()
    module.load_state_dict(state, strict=True)
    module.eval()
    return recorded_forward(module, parts, args, source=user.__file__)
