"""The scan as an interview answer with loops: per batch item and channel, the state vector of size N updated one
step at a time with exp(Δ_t A) and Δ_t B_t u_t, read out by C_t; Δ's bias and softplus first, D and the gate last."""
import math

import torch


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    Bsz, Dch, L = u.shape
    N = A.shape[1]
    y = torch.zeros_like(u)
    for b in range(Bsz):
        for d in range(Dch):
            h = torch.zeros(N, dtype=u.dtype, device=u.device)
            for t in range(L):
                dt = delta[b, d, t] + (delta_bias[d] if delta_bias is not None else 0.0)
                if delta_softplus:
                    dt = torch.log1p(torch.exp(dt)) if dt < 20 else dt  # softplus, as F.softplus's threshold 20
                h = torch.exp(dt * A[d]) * h + dt * B[b, :, t] * u[b, d, t]
                out = (C[b, :, t] * h).sum()
                if D is not None:
                    out = out + D[d] * u[b, d, t]
                if z is not None:
                    out = out * z[b, d, t] * torch.sigmoid(z[b, d, t])
                y[b, d, t] = out
    return y
