# followup: exponential moving average
"""Keller Jordan's muon_update and zeropower_via_newtonschulz5 as published (KellerJordan/Muon, muon.py): the EMA
momentum (momentum.lerp_(grad, 1 - beta); update = grad.lerp_(momentum, beta)), Muon.step's p.add_(update,
alpha=-lr) without weight decay. One adaptation: the iteration in float32 where the original casts to bfloat16 (whose
1% rounding the checks do not accept). Run on copies, since the original updates the buffer and the gradient in
place."""
import torch


def zeropower_via_newtonschulz5(G, steps: int):
    assert G.ndim >= 2
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.float()  # the original: G.bfloat16()
    if G.size(-2) > G.size(-1):
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def muon_update(grad, momentum, beta=0.95, ns_steps=5, nesterov=True):
    momentum.lerp_(grad, 1 - beta)
    update = grad.lerp_(momentum, beta) if nesterov else momentum
    update = zeropower_via_newtonschulz5(update, steps=ns_steps)
    update *= max(1, grad.size(-2) / grad.size(-1)) ** 0.5
    return update


def newton_schulz(G, steps=5, eps=1e-7):
    if G.ndim != 2:
        raise ValueError("a matrix")
    return zeropower_via_newtonschulz5(G, steps).to(G.dtype)


def muon_step(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5):
    if param.ndim != 2:
        raise ValueError("Muon is for 2-D parameters only")
    p, state = param.clone(), buf.clone()
    update = muon_update(grad.clone(), state, beta=momentum, ns_steps=ns_steps, nesterov=nesterov)
    p.add_(update.reshape(p.shape), alpha=-lr)
    return p, state
