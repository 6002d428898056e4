"""Keller Jordan's zeropower_via_newtonschulz5 (KellerJordan/Muon, muon.py) re-typed, with X = G.bfloat16() replaced
by the input's dtype, and the momentum of modded-nanogpt's first Muon (buf.mul_(momentum).add_(g);
g = g.add(buf, alpha=momentum) if nesterov else buf), on a copy of the caller's buffer."""
import torch


def zeropower_via_newtonschulz5(G, steps: int):
    assert G.ndim >= 2
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.clone()
    if G.size(-2) > G.size(-1):
        X = X.mT
    # Ensure spectral norm is at most 1
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    # Perform the NS iterations
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def newton_schulz(G, steps=5, eps=1e-7):
    if G.ndim != 2:
        raise ValueError("a matrix")
    return zeropower_via_newtonschulz5(G, steps)


def muon_step(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5):
    if param.ndim != 2:
        raise ValueError("Muon is for 2-D parameters only")
    g = grad
    buf = buf.clone()
    buf.mul_(momentum).add_(g)
    g = g.add(buf, alpha=momentum) if nesterov else buf
    g = zeropower_via_newtonschulz5(g, steps=ns_steps)
    g = g * max(1, g.size(-2) / g.size(-1)) ** 0.5
    return param.add(g, alpha=-lr), buf
