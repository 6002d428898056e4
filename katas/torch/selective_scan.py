"""Mamba's selective scan (S6): the selective state-space model, from scratch.

Shape legend:
    B    batch size
    D    channels (Mamba's d_inner): each channel has its own state
    L    sequence length
    N    state size per channel (d_state)

Mamba (Gu and Dao 2023) runs, for every channel d, a linear state-space model whose parameters depend on
the input: the step Δ, B and C change with every token ("selective"), A is learned but fixed. Write it as
mamba_ssm's reference, selective_scan_ref, for a real A and B, C that vary over time:

    1. Δ = delta (+ delta_bias[d] if given), then Δ = softplus(Δ) if delta_softplus
    2. zero-order hold:  ΔA[b,d,t,n]   = exp(Δ[b,d,t] · A[d,n])
                         ΔB_u[b,d,t,n] = Δ[b,d,t] · B[b,n,t] · u[b,d,t]
    3. the scan, from h = 0 (B, D, N):  for t = 0 .. L - 1:
                         h = ΔA[:, :, t] ⊙ h + ΔB_u[:, :, t]
                         y[b,d,t] = Σ_n C[b,n,t] · h[b,d,n]       (after the update: y_t reads h_t)
    4. y = y + D[d] · u  if D is given;  y = y · silu(z)  if z is given

Arguments:
    u            (B, D, L) float: the input
    delta        (B, D, L) float: the step before its bias and softplus
    A            (D, N) float: the state matrix (diagonal per channel; Mamba's A = -exp(A_log) < 0)
    B            (B, N, L) float: the input matrix at each time
    C            (B, N, L) float: the output matrix at each time
    D            (D,) float or None: the skip connection
    z            (B, D, L) float or None: the gate, applied as y · silu(z)
    delta_bias   (D,) float or None: added to delta, per channel
    delta_softplus  bool: apply softplus to Δ (after the bias)
returns y (B, D, L) in u's dtype, differentiable in every float input.

Rules: do not modify the inputs.
Off limits: mamba_ssm, selective_scan_cuda.
"""

import torch
from torch import Tensor


def selective_scan(u: Tensor, delta: Tensor, A: Tensor, B: Tensor, C: Tensor, D: Tensor | None = None,
                   z: Tensor | None = None, delta_bias: Tensor | None = None, delta_softplus: bool = False) -> Tensor:
    raise NotImplementedError("write selective_scan: Δ, exp(ΔA) and ΔB·u, the scan over time, then D·u and silu(z)")
