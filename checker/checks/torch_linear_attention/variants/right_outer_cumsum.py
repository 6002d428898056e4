"""Causal by torch.cumsum over (B, H, T, d_k, d_v) outer products; non-causal with matmuls."""
import torch
import torch.nn.functional as F
from torch import Tensor


def feature_map(x: Tensor) -> Tensor:
    return F.elu(x) + 1.0


def linear_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    q, k = feature_map(q), feature_map(k)
    if causal:
        kv = torch.cumsum(k.unsqueeze(-1) * v.unsqueeze(-2), dim=2)   # (B, H, T, d_k, d_v)
        z = torch.cumsum(k, dim=2)                                     # (B, H, T, d_k)
        num = (q.unsqueeze(-1) * kv).sum(dim=-2)                       # (B, H, T, d_v)
        den = (q * z).sum(dim=-1, keepdim=True)
    else:
        kv = torch.matmul(k.transpose(-1, -2), v)
        z = k.sum(dim=2, keepdim=True)                                  # (B, H, 1, d_k)
        num = torch.matmul(q, kv)
        den = torch.matmul(q, z.transpose(-1, -2))                      # (B, H, T_q, 1)
    return num / den
