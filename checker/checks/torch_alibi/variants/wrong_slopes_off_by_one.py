# expect: your slopes start at 2^0 = 1
"""m_h = 2^(-8h/H) with h from 0: every slope is one step too large, the first is 1."""
import math

import torch


def alibi_slopes(num_heads):
    n = 2 ** math.floor(math.log2(num_heads))
    slopes = [2 ** (-8 * h / n) for h in range(n)]
    extra = [2 ** (-8 * h / (2 * n)) for h in range(2 * n)][0::2]
    return torch.tensor(slopes + extra[: num_heads - n], dtype=torch.float64)


def alibi_bias(num_heads, T_q, T_k):
    i = torch.arange(T_k - T_q, T_k, dtype=torch.float64)[:, None]
    j = torch.arange(T_k, dtype=torch.float64)[None, :]
    return -alibi_slopes(num_heads).view(-1, 1, 1) * (i - j)


def alibi_attention(q, k, v):
    H, T_q, T_k = q.size(1), q.size(2), k.size(2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1)) + alibi_bias(H, T_q, T_k).to(q)
    causal = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)
    return scores.masked_fill(~causal, float("-inf")).softmax(-1) @ v
