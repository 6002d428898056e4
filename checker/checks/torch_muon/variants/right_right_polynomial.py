"""The quintic as a polynomial on the right, X·(a·I + b·XᵀX + c·(XᵀX)²), which equals a·X + b·(X Xᵀ)X + c·(X Xᵀ)²X
for any X: no transposition needed (only a larger Gram matrix for a tall G). Momentum written out per element."""
import torch


def newton_schulz(G, steps=5, eps=1e-7):
    if len(G.shape) != 2:
        raise ValueError("newton_schulz takes a matrix")
    a, b, c = 3.4445, -4.7750, 2.0315
    X = G / (torch.linalg.matrix_norm(G) + eps)
    eye = torch.eye(G.shape[1], dtype=G.dtype)
    for _ in range(steps):
        M = X.T @ X
        X = X @ (a * eye + b * M + c * M @ M)
    return X


def muon_step(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5):
    if len(param.shape) != 2:
        raise ValueError("muon_step takes a matrix")
    new_buf = torch.add(grad, buf, alpha=momentum)
    direction = torch.add(grad, new_buf, alpha=momentum) if nesterov else new_buf
    rows, cols = param.shape
    return param - lr * (max(rows, cols) / cols) ** 0.5 * newton_schulz(direction, ns_steps), new_buf
