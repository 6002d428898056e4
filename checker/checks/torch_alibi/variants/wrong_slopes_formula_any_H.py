# expect: not a power of two
"""The paper's formula 2^(-8(h+1)/H) for every H, without the get_slopes rule."""
import math

import torch


def alibi_slopes(num_heads):
    h = torch.arange(1, num_heads + 1, dtype=torch.float64)
    return 2.0 ** (-8.0 * h / num_heads)


def alibi_bias(num_heads, T_q, T_k):
    i = torch.arange(T_k - T_q, T_k, dtype=torch.float64)[:, None]
    j = torch.arange(T_k, dtype=torch.float64)[None, :]
    return -alibi_slopes(num_heads).view(-1, 1, 1) * (i - j)


def alibi_attention(q, k, v):
    H, T_q, T_k = q.size(1), q.size(2), k.size(2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + alibi_bias(H, T_q, T_k).to(q)
    causal = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)
    return scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
