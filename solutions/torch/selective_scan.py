"""Mamba's selective scan (S6), real-valued, with B and C that vary over time (reference answer).

Shape legend:
    B    batch size
    D    channels (Mamba's d_inner), each with its own state
    L    sequence length
    N    state size per channel (d_state)

As mamba_ssm's selective_scan_ref (mamba_ssm/ops/selective_scan_interface.py), for a real A and B, C of shape
(B, N, L): the step Δ, optionally biased and passed through softplus, discretises the continuous system by a
zero-order hold, ΔA = exp(Δ·A), and ΔB·u (Mamba's simplified, Euler-like B); then h_t = ΔA_t ⊙ h_{t-1} + ΔB_t u_t,
y_t = C_t · h_t, plus the skip D·u and the gate silu(z). Computed in the inputs' dtype.
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def selective_scan(u: Tensor, delta: Tensor, A: Tensor, B: Tensor, C: Tensor, D: Tensor | None = None,
                   z: Tensor | None = None, delta_bias: Tensor | None = None, delta_softplus: bool = False) -> Tensor:
    """y (B, D, L): the selective state-space scan over time, one state of size N per channel."""
    # 1) the step Δ: its bias, then softplus
    bias = delta_bias[:, None] if delta_bias is not None else 0.0  # (D, 1)
    dt = delta + bias  # (B, D, L)
    if delta_softplus:
        dt = F.softplus(dt)
    # 2) zero-order hold: ΔA = exp(Δ·A) and the input term Δ·B·u, per channel, time and state
    deltaA = torch.exp(dt[..., None] * A[:, None, :])  # (B, D, L, 1) * (D, 1, N) -> (B, D, L, N)
    deltaB_u = dt[..., None] * B.transpose(1, 2)[:, None] * u[..., None]  # (B,D,L,1) * (B,1,L,N) * (B,D,L,1)
    # 3) the scan: h_t = ΔA_t ⊙ h_{t-1} + ΔB_t u_t, read out by y_t = C_t · h_t
    h = u.new_zeros(u.shape[0], u.shape[1], A.shape[1])  # (B, D, N), the state before the first step
    ys = []
    for t in range(u.shape[2]):
        h = deltaA[:, :, t] * h + deltaB_u[:, :, t]  # (B, D, N)
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, :, t]))  # (B, D, N) x (B, N) -> (B, D)
    # 4) the skip connection D·u, then the gate silu(z)
    skip = u * D[:, None] if D is not None else torch.zeros_like(u)  # (B, D, L) * (D, 1)
    y = torch.stack(ys, dim=2) + skip  # L x (B, D) -> (B, D, L)
    if z is not None:
        y = y * F.silu(z)
    return y
