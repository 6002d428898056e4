# followup: in float16
"""A loop over batch items and heads, and a manual softmax: slow but correct."""
import math

import torch
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        B, H, T_q, d_k = Q.shape
        T_k = K.shape[2]
        visible = torch.ones(B, H, T_q, T_k, dtype=torch.bool, device=Q.device) if mask is None else mask.expand(B, H, T_q, T_k)
        outs, weights = [], []
        for b in range(B):
            for h in range(H):
                s = Q[b, h] @ K[b, h].T / math.sqrt(d_k)
                s = torch.where(visible[b, h], s, torch.full_like(s, -math.inf))
                top = s.max(dim=-1, keepdim=True).values.clamp(min=-1e30)
                e = torch.exp(s - top) * visible[b, h]
                total = e.sum(dim=-1, keepdim=True)
                w = torch.where(total > 0, e / total.clamp(min=1e-300), torch.zeros_like(e))
                weights.append(w)
                outs.append(w @ V[b, h])
        w = torch.stack(weights).view(B, H, T_q, T_k)
        return torch.stack(outs).view(B, H, T_q, -1), self.dropout(w)
