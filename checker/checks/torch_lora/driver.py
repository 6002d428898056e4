"""Runs in the child: the user's LoRALinear built fresh, trained one step, merged and unmerged.

Drivers never judge: they return what the user's code did, the parent compares (see Kit.drive).
The parent also runs them on its named mistakes, with a namespace holding the mistake's class.
"""

import copy

import torch

from checker.sandbox.modules import load_state


def lora_fresh(user, base, r, alpha, x, seed):
    """A wrapper built on a copy of base with the global RNG seeded: its output, base's own, A and B."""
    torch.manual_seed(seed)
    plain = copy.deepcopy(base)
    module = user.LoRALinear(base=base, r=r, alpha=alpha).to(x.dtype).eval()
    with torch.no_grad():
        out = module(x)
        want = plain(x)
    params = dict(module.named_parameters())
    return {"out": out, "base_out": want, "A": params.get("lora_A"), "B": params.get("lora_B")}


def lora_trainable(user, init, state, x):
    """Which parameters require grad, and which receive a gradient from one backward pass."""
    module = user.LoRALinear(**init).to(x.dtype)
    load_state(module, state)
    module.train()
    requires = {n: p.requires_grad for n, p in module.named_parameters()}
    out = module(x)
    if out.requires_grad:
        out.square().sum().backward()
    grads = {n: p.grad is not None and bool(p.grad.abs().sum() > 0) for n, p in module.named_parameters()}
    return {"requires_grad": requires, "has_grad": grads}


def lora_merge(user, init, state, x):
    """Outputs and base weight before merge(), after merge() called twice, and after unmerge() (eval mode)."""
    module = user.LoRALinear(**init).to(x.dtype)
    load_state(module, state)
    module.eval()
    with torch.no_grad():
        before = module(x)
        module.merge()
        once = module(x)
        module.merge()  # a second merge must change nothing
        merged, w_merged = module(x), module.base.weight.detach().clone()
        module.unmerge()
        unmerged, w_after = module(x), module.base.weight.detach().clone()
    trainable = sorted(n for n, p in module.named_parameters() if p.requires_grad)
    return {"before": before, "once": once, "merged": merged, "W_merged": w_merged, "unmerged": unmerged,
            "W_after": w_after, "trainable": trainable}
