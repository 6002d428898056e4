# expect: nesterov
"""Always the plain momentum buffer: the nesterov flag is taken and never read."""
import torch


def newton_schulz(G, steps=5, eps=1e-7):
    if G.dim() != 2:
        raise ValueError("G must be a matrix")
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G
    if G.size(0) > G.size(1):
        X = X.T
    X = X / (X.norm() + eps)
    for _ in range(steps):
        A = X @ X.T
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(0) > G.size(1):
        X = X.T
    return X


def muon_step(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5):
    if param.dim() != 2:
        raise ValueError("Muon is for 2-D parameters")
    buf = buf * momentum + grad
    g = buf
    g = newton_schulz(g, steps=ns_steps)
    g = g * max(1, param.size(0) / param.size(1)) ** 0.5
    return param - lr * g, buf
