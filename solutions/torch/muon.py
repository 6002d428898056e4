"""One Muon step for a 2-D parameter (reference answer).

Shape legend:
    rows, cols  the parameter's shape (an nn.Linear weight: out_features, in_features)
    r, c        the same matrix turned wide: r = min(rows, cols), c = max(rows, cols)

As Keller Jordan's Muon (github.com/KellerJordan/Muon, muon.py: zeropower_via_newtonschulz5 and the update of
Muon.step, with the momentum form of modded-nanogpt's first Muon: buf = μ·buf + g, Nesterov g + μ·buf), computed
in the parameter's dtype where the original casts the iteration to bfloat16.
"""

import torch
from torch import Tensor


def newton_schulz(G: Tensor, steps: int = 5, eps: float = 1e-7) -> Tensor:
    """The orthogonalisation of G: U·S'·Vᵀ with every singular value S' pushed into about [0.7, 1.2]."""
    if G.ndim != 2:
        raise ValueError(f"Newton–Schulz orthogonalises a matrix; got a tensor of {G.ndim} dimensions")
    a, b, c = 3.4445, -4.7750, 2.0315
    rows, cols = G.shape
    tall = rows > cols
    # 1) work on the wide orientation, so that X Xᵀ is the smaller Gram matrix
    X = G.mT if tall else G  # (r, c)
    # 2) Frobenius norm 1: then every singular value is at most 1, where the iteration converges
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + eps)  # (r, c)
    # 3) the quintic iteration: each singular value σ -> aσ + bσ³ + cσ⁵, pushed towards 1
    for _ in range(steps):
        A = X @ X.mT  # (r, c) @ (c, r) -> (r, r)
        B = b * A + c * A @ A  # (r, r)
        X = a * X + B @ X  # (r, r) @ (r, c) -> (r, c)
    # 4) back to G's orientation
    return X.mT if tall else X  # (rows, cols)


def muon_step(param: Tensor, grad: Tensor, buf: Tensor, lr: float = 0.02, momentum: float = 0.95,
              nesterov: bool = True, ns_steps: int = 5) -> tuple[Tensor, Tensor]:
    """(the new parameter, the new momentum buffer), both (rows, cols) in param's dtype."""
    if param.ndim != 2:
        raise ValueError(f"Muon updates 2-D parameters only; got {param.ndim} dimensions (use AdamW for the rest)")
    rows, cols = param.shape
    # 5) the momentum buffer accumulates the gradients
    buf = momentum * buf + grad  # (rows, cols)
    # 6) Nesterov: the gradient plus a look ahead along the new buffer
    update = grad + momentum * buf if nesterov else buf  # (rows, cols)
    # 7) orthogonalise; a tall matrix's update is scaled up so that its RMS matches a square one's
    O = newton_schulz(update, ns_steps)  # (rows, cols)
    scale = max(1, rows / cols) ** 0.5
    # 8) the step
    return param - lr * scale * O, buf
