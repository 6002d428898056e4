"""Runs in the child: the user's dropout in training mode, differentiated.

Drivers never judge: they return what the user's code did, the parent compares (see Kit.drive).
"""

import torch


def dropout_backward(user, x, p, seed, cotangent):
    """The output of dropout(x, p, True, generator seeded with seed) and the gradient of sum(out * cotangent)."""
    leaf = x.detach().clone().requires_grad_(True)
    out = user.dropout(leaf, p, True, torch.Generator().manual_seed(seed))
    if isinstance(out, torch.Tensor) and out.requires_grad:
        (out * cotangent).sum().backward()
    return {"out": out, "grad": leaf.grad}


def two_draws_without_generator(user, x, p, seed):
    """Two calls of dropout(x, p, True) with no generator, one after the other, from the global state seeded once;
    each result copied as it comes back (code that writes into x and returns it returns one tensor twice: not one
    mask repeated, which is what two equal results say here)."""
    torch.manual_seed(seed)
    return [_kept(user.dropout(x, p, True, None)), _kept(user.dropout(x, p, True, None))]


def _kept(result):
    return result.clone() if isinstance(result, torch.Tensor) else result
