"""The authors' get_slopes (recursive, plain lists) and BLOOM's trick in attention: bias m_h * j.

m_h * j differs from -m_h * (i' - j) by m_h * i', the same for every key of a row, and softmax
ignores a constant added to a row: the attention output is the same.
"""
import math

import torch


def _power_of_2(n):
    start = 2 ** (-(2 ** -(math.log2(n) - 3)))
    return [start * start ** i for i in range(n)]


def _get_slopes(n):
    if math.log2(n).is_integer():
        return _power_of_2(n)
    closest = 2 ** math.floor(math.log2(n))
    return _power_of_2(closest) + _get_slopes(2 * closest)[0::2][: n - closest]


def alibi_slopes(num_heads):
    return torch.tensor(_get_slopes(num_heads), dtype=torch.float64)


def alibi_bias(num_heads, T_q, T_k):
    rel = torch.arange(T_k, dtype=torch.float64)[None, :] - torch.arange(T_k - T_q, T_k, dtype=torch.float64)[:, None]
    return alibi_slopes(num_heads)[:, None, None] * rel  # m_h * (j - i')


def alibi_attention(q, k, v):
    B, H, T_q, d_k = q.shape
    T_k = k.shape[2]
    m = alibi_slopes(H).to(device=q.device, dtype=q.dtype)
    key_pos = torch.arange(T_k, device=q.device, dtype=q.dtype)
    scores = torch.einsum("bhqd,bhkd->bhqk", q, k) / math.sqrt(d_k) + m[:, None, None] * key_pos  # (B, H, T_q, T_k)
    query_pos = torch.arange(T_k - T_q, T_k, device=q.device)
    future = torch.arange(T_k, device=q.device)[None, :] > query_pos[:, None]
    scores = torch.where(future, torch.full_like(scores, -math.inf), scores)
    return torch.einsum("bhqk,bhkd->bhqd", torch.softmax(scores, dim=-1), v)
