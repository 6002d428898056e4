# expect: a matrix of query-key weights
"""The quadratic form: the right numbers, through the (T_q, T_k) matrix linear attention avoids."""
import torch
import torch.nn.functional as F


def feature_map(x):
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False):
    W = feature_map(q) @ feature_map(k).transpose(-2, -1)  # (B, H, T_q, T_k)
    if causal:
        T = q.size(-2)
        W = W * torch.ones(T, T, device=q.device, dtype=q.dtype).tril()
    return (W @ v) / W.sum(dim=-1, keepdim=True)
