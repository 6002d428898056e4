"""One AdamW step by hand (Loshchilov & Hutter 2019, "Decoupled Weight Decay Regularization"), the update
torch.optim.AdamW makes for one parameter tensor.

Shape legend:
    ...  the parameter's shape, any: (P,), (R, P), (R, P, Q); grad, exp_avg and exp_avg_sq have it too

Implement adamw_step(param, grad, exp_avg, exp_avg_sq, step, lr=1e-3, betas=(0.9, 0.999), eps=1e-8,
weight_decay=1e-2), with t = step and λ = weight_decay:

    θ ← θ · (1 − lr·λ)                              decoupled weight decay, on θ BEFORE the update;
                                                     NOT λ·θ added to the gradient (that is L2 / Adam)
    m ← β1·m + (1 − β1)·g                            first moment   (exp_avg)
    v ← β2·v + (1 − β2)·g²                           second moment  (exp_avg_sq)
    m̂ = m / (1 − β1^t)      v̂ = v / (1 − β2^t)        bias correction: m and v start at 0
    θ ← θ − lr · m̂ / (√v̂ + ε)                       ε OUTSIDE the square root

Arguments:
    param       (...) float tensor θ_{t-1} (float64 or float32)
    grad        (...) the gradient g_t at θ_{t-1}
    exp_avg     (...) m_{t-1} (zeros before the first step)
    exp_avg_sq  (...) v_{t-1} (zeros before the first step)
    step        int t >= 1: the number of this step, counting from 1 (torch increments its counter first)
    lr, betas, eps, weight_decay: floats, torch.optim.AdamW's defaults
returns the tuple (param, exp_avg, exp_avg_sq) after the step: NEW tensors of param's shape and dtype.
This is the functional form: do not modify any argument in place (torch's optimizer does; here
the caller keeps the old state).

Rules: do not modify the arguments.
Off limits: torch.optim.AdamW, torch.optim.Adam, torch.optim.adamw, torch.optim.adam,
torch.optim._functional, torch._fused_adamw_, torch._fused_adam_.
"""

import math

from torch import Tensor


def adamw_step(param: Tensor, grad: Tensor, exp_avg: Tensor, exp_avg_sq: Tensor, step: int, lr: float = 1e-3,
               betas: tuple[float, float] = (0.9, 0.999), eps: float = 1e-8,
               weight_decay: float = 1e-2) -> tuple[Tensor, Tensor, Tensor]:
    raise NotImplementedError("write adamw_step: decoupled decay, the two moments, bias correction, the update")
