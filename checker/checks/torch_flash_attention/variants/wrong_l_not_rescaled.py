# expect: a term dropped from a sum, or a factor from a product
"""The accumulator is rescaled, the running sum is not."""

import math

import torch
from torch import Tensor


def flash_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False, block_size: int = 16) -> Tensor:
    """softmax(q kᵀ / √d_k) v, one tile of block_size keys at a time (FlashAttention's forward)."""
    B, H, T_q, d_k = q.shape
    _, _, T_k, d_v = v.shape
    scale = 1.0 / math.sqrt(d_k)
    # 1) running statistics per query: max m, sum l of exp(score - m), accumulator of exp(score - m) v
    m = q.new_full((B, H, T_q, 1), float("-inf"))
    l = q.new_zeros((B, H, T_q, 1))
    acc = q.new_zeros((B, H, T_q, d_v))
    rows = torch.arange(T_q, device=q.device)[:, None] + (T_k - T_q)  # (T_q, 1): absolute query positions
    for start in range(0, T_k, block_size):
        stop = min(start + block_size, T_k)  # the last tile may be shorter
        k_tile, v_tile = k[..., start:stop, :], v[..., start:stop, :]  # (B, H, b, d_k), (B, H, b, d_v)
        # 2) the scores of this tile only
        s = q @ k_tile.mT * scale  # (B, H, T_q, d_k) x (B, H, d_k, b) -> (B, H, T_q, b)
        if causal:
            cols = torch.arange(start, stop, device=q.device)  # (b,): absolute key positions
            s = s.masked_fill(cols > rows, float("-inf"))  # (T_q, b) broadcast over B, H
        # 3) new running max; a query that has seen no key yet keeps -inf, shifted by 0 instead
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (B, H, T_q, 1)
        shift = torch.where(m_new.isneginf(), torch.zeros_like(m_new), m_new)
        p = torch.exp(s - shift)  # (B, H, T_q, b)
        alpha = torch.exp(m - shift)  # rescales what was summed under the old max
        # 4) rescale the old sum and accumulator, add this tile
        l = l + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v_tile  # (B, H, T_q, b) x (B, H, b, d_v) -> (B, H, T_q, d_v)
        m = m_new
    # 5) normalise once at the end; a query with no visible key has l = 0 and acc = 0: output 0
    return acc / torch.where(l == 0, torch.ones_like(l), l)
