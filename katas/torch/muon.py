"""One Muon step (Keller Jordan's MomentUm Orthogonalized by Newton–Schulz) for a 2-D parameter.

Shape legend:
    rows, cols  the parameter's shape (an nn.Linear weight: out_features, in_features)

Implement the two pieces of Muon (Keller Jordan 2024, github.com/KellerJordan/Muon; used to train modded-nanogpt
and Kimi's Moonlight), for matrices only:

1. newton_schulz(G, steps=5, eps=1e-7): an approximate orthogonalisation of G, U·Vᵀ of its SVD, by
   zeropower_via_newtonschulz5's quintic iteration with the published coefficients (a, b, c) = (3.4445, -4.7750,
   2.0315):

       X = Gᵀ if rows > cols else G               work on the wide orientation (X Xᵀ is the smaller matrix)
       X = X / (‖X‖_F + eps)                      Frobenius norm: every singular value at most 1
       repeat steps times:
           A = X Xᵀ
           B = b·A + c·A·A
           X = a·X + B·X                          each singular value σ -> aσ + bσ³ + cσ⁵
       return Xᵀ if rows > cols else X            G's orientation again

   The result has G's shape; its singular values land in about [0.7, 1.2], not exactly 1 (the coefficients
   trade accuracy for speed). Compute in G's dtype (the original casts to bfloat16, see the statement).
   If G is not 2-D: raise ValueError.

2. muon_step(param, grad, buf, lr=0.02, momentum=0.95, nesterov=True, ns_steps=5) -> (new_param, new_buf):

       buf     = momentum·buf + grad                              the momentum buffer
       update  = grad + momentum·buf  (the NEW buf)  if nesterov, else buf
       O       = newton_schulz(update, ns_steps)
       new_param = param - lr · max(1, rows / cols) ** 0.5 · O

   If param is not 2-D (a bias, a norm's gain, an embedding handled elsewhere): raise ValueError; those
   parameters are trained by AdamW in Muon's setups.

Arguments of newton_schulz:
    G       (rows, cols) float
    steps   int >= 0, default 5
    eps     float, default 1e-7
returns (rows, cols) in G's dtype.

Arguments of muon_step:
    param   (rows, cols) float: the parameter
    grad    (rows, cols) float: its gradient
    buf     (rows, cols) float: the momentum buffer (zeros before the first step)
    lr, momentum  floats; nesterov bool; ns_steps int
returns (new_param, new_buf), both (rows, cols) in param's dtype.

Rules: do not modify the inputs (return new tensors; an optimizer would copy them into place).
Off limits: muon (Keller Jordan's package).
"""

import torch
from torch import Tensor


def newton_schulz(G: Tensor, steps: int = 5, eps: float = 1e-7) -> Tensor:
    raise NotImplementedError("write newton_schulz: normalise, then the quintic iteration, on the wide orientation")


def muon_step(param: Tensor, grad: Tensor, buf: Tensor, lr: float = 0.02, momentum: float = 0.95,
              nesterov: bool = True, ns_steps: int = 5) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write muon_step: momentum, Nesterov, newton_schulz, the shape scale, the step")
