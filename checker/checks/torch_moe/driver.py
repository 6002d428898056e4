"""Driver for the moe kata: the user's MoE with the reference's weights, every expert hooked.

Returns, per expert, the rows it received (all calls concatenated) and how many calls it got, with
the module's outputs; the parent maps the rows back to tokens and judges.
"""

import torch

from checker.sandbox.modules import load_state


def routed_forward(user, target: str, init: dict, state: dict, x: torch.Tensor) -> dict:
    module = getattr(user, target)(**init).double()
    load_state(module, state)
    module.eval()
    rows: list[list[torch.Tensor]] = [[] for _ in range(init["num_experts"])]
    handles = []
    for e in range(init["num_experts"]):
        def record(_module, args, _output, e=e):
            if args and isinstance(args[0], torch.Tensor):
                rows[e].append(args[0].detach().reshape(-1, x.shape[-1]).clone())
        handles.append(module.get_submodule(f"experts.{e}").register_forward_hook(record))
    try:
        with torch.no_grad():
            value = module(x)
    finally:
        for handle in handles:
            handle.remove()
    return {"rows": [torch.cat(r) if r else x.new_zeros(0, x.shape[-1]) for r in rows],
            "calls": [len(r) for r in rows], "value": value}
