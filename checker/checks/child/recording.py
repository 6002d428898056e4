"""Records the calls of a module's given sub-parts (attention, norms, FFN, ...): what each received.

The same recorder runs on the user's module in the child (through Kit.drive) and on the reference
in the parent, with the same weights and inputs; kit.first_divergence compares the two. Like every
driver it returns plain values and judges nothing.
"""

import torch


def recorded_forward(module: torch.nn.Module, parts: tuple, args: tuple) -> dict:
    """Run module(*args) with forward hooks on the named sub-modules it has.

    Returns {"calls": [[name, [tensor arguments, positional then keyword], output], ...] in call order,
    "missing": [names the module does not have]}; the output is the first tensor a call returned.
    """
    calls, handles, missing = [], [], []

    def hook(name):
        def record(_module, positional, keywords, output):
            tensors = [a for a in (*positional, *keywords.values()) if isinstance(a, torch.Tensor)]
            first = output if isinstance(output, torch.Tensor) else next(
                (o for o in output if isinstance(o, torch.Tensor)), None) if isinstance(output, (tuple, list)) else None
            calls.append([name, [a.detach().clone() for a in tensors], None if first is None else first.detach().clone()])
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
    return recorded_forward(module, parts, args)
