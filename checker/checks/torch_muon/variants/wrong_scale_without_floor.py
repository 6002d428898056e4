# expect: an argument or keyword left out
"""The RMS scale taken as sqrt(rows / cols) for every shape, without its floor of 1: right for a tall weight, but a
wide one (an up-projection's transpose) gets its update shrunk (a slip when porting Muon from memory)."""

from torch import Tensor


def newton_schulz(G: Tensor, steps: int = 5, eps: float = 1e-7) -> Tensor:
    if G.ndim != 2:
        raise ValueError(f"expected a matrix, got {G.ndim} dimensions")
    a, b, c = 3.4445, -4.7750, 2.0315
    tall = G.size(0) > G.size(1)
    X = G.T if tall else G
    X = X / (X.norm() + eps)
    for _ in range(steps):
        A = X @ X.T
        X = a * X + (b * A + c * A @ A) @ X
    return X.T if tall else X


def muon_step(param: Tensor, grad: Tensor, buf: Tensor, lr: float = 0.02, momentum: float = 0.95,
              nesterov: bool = True, ns_steps: int = 5) -> tuple[Tensor, Tensor]:
    if param.ndim != 2:
        raise ValueError(f"Muon updates matrices; got {param.ndim} dimensions")
    buf = momentum * buf + grad
    update = grad + momentum * buf if nesterov else buf
    O = newton_schulz(update, ns_steps)
    scale = (param.size(0) / param.size(1)) ** 0.5
    return param - lr * scale * O, buf
