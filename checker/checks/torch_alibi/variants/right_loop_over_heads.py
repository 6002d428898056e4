"""Slopes by the rule written out, and attention head by head with -1e9 for the future."""
import math

import torch


def alibi_slopes(num_heads):
    lower = 1
    while lower * 2 <= num_heads:
        lower *= 2
    first = [2.0 ** (-8.0 * (h + 1) / lower) for h in range(lower)]
    doubled = [2.0 ** (-8.0 * (h + 1) / (2 * lower)) for h in range(2 * lower)]
    return torch.tensor(first + doubled[::2][: num_heads - lower], dtype=torch.float64)


def alibi_bias(num_heads, T_q, T_k):
    slopes = alibi_slopes(num_heads)
    out = torch.empty(num_heads, T_q, T_k, dtype=torch.float64)
    for h in range(num_heads):
        for i in range(T_q):
            for j in range(T_k):
                out[h, i, j] = -slopes[h] * (i + T_k - T_q - j)
    return out


def alibi_attention(q, k, v):
    H, T_q, T_k = q.size(1), q.size(-2), k.size(-2)
    bias = alibi_bias(H, T_q, T_k).to(dtype=q.dtype, device=q.device)
    future = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).triu(T_k - T_q + 1)
    heads = []
    for h in range(H):
        s = q[:, h] @ k[:, h].transpose(-1, -2) / math.sqrt(q.size(-1)) + bias[h]
        s = s.masked_fill(future, -1e9)
        heads.append(torch.softmax(s, dim=-1) @ v[:, h])
    return torch.stack(heads, dim=1)
