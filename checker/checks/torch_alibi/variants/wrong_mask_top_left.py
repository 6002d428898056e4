# expect: one variable read where another belongs
"""A causal mask built as tril(T_q, T_k) from the top-left: wrong as soon as T_q < T_k."""
import math

import torch


def alibi_slopes(num_heads):
    n = 2 ** math.floor(math.log2(num_heads))
    slopes = 2.0 ** (-8.0 * torch.arange(1, n + 1, dtype=torch.float64) / n)
    extra = 2.0 ** (-8.0 * torch.arange(1, 2 * n, 2, dtype=torch.float64) / (2 * n))
    return torch.cat([slopes, extra[: num_heads - n]])


def alibi_bias(num_heads, T_q, T_k):
    i = torch.arange(T_k - T_q, T_k, dtype=torch.float64)[:, None]
    j = torch.arange(T_k, dtype=torch.float64)[None, :]
    return -alibi_slopes(num_heads).view(-1, 1, 1) * (i - j)


def alibi_attention(q, k, v):
    H, T_q, T_k = q.size(1), q.size(2), k.size(2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + alibi_bias(H, T_q, T_k).to(q)
    causal = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril()
    return scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
