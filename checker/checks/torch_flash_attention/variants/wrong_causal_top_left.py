# expect: a term dropped from a sum, or a factor from a product
"""Causal mask aligned top-left: query i sees keys 0..i, whatever T_k - T_q is.

Shape legend:
    B           batch size
    H           number of heads
    T_q         query length
    T_k         key (and value) length
    d_k         query/key size per head
    d_v         value size per head
    b           keys in the current tile (block_size, fewer in the last tile)

causal=True: query i sees key j when j <= i + (T_k - T_q) (the queries are the last T_q
positions). A query that sees no key gets a zero output. No tensor is larger than
B·H·max(T_q, T_k)·max(block_size, d_k, d_v) elements: the scores exist one tile at a time.
"""

import math

import torch
from torch import Tensor


def flash_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False, block_size: int = 16) -> Tensor:
    """softmax(q kᵀ / √d_k) v, one tile of block_size keys at a time (FlashAttention's forward)."""
    T_q, T_k = q.size(-2), k.size(-2)
    scale = 1.0 / math.sqrt(q.size(-1))
    # 1) running statistics per query: max m, sum l of exp(score - m), accumulator of exp(score - m) v
    m = q.new_full((*q.shape[:-1], 1), float("-inf"))  # (B, H, T_q, 1)
    l = q.new_zeros((*q.shape[:-1], 1))  # (B, H, T_q, 1)
    acc = q.new_zeros((*q.shape[:-1], v.size(-1)))  # (B, H, T_q, d_v)
    rows = torch.arange(T_q, device=q.device)[:, None]  # (T_q, 1): absolute query positions
    for start in range(0, T_k, block_size):
        k_tile, v_tile = k[..., start:start + block_size, :], v[..., start:start + block_size, :]  # (B, H, b, d_k/d_v)
        # 2) the scores of this tile only
        s = q @ k_tile.transpose(-2, -1) * scale  # (B, H, T_q, d_k) x (B, H, d_k, b) -> (B, H, T_q, b)
        if causal:
            cols = torch.arange(start, start + k_tile.size(-2), device=q.device)  # (b,)
            s = s.masked_fill(cols > rows, float("-inf"))  # (T_q, b) broadcast over B, H
        # 3) new running max; a query that has seen no key yet keeps -inf, shifted by 0 instead
        m_new = torch.maximum(m, s.amax(dim=-1, keepdim=True))  # (B, H, T_q, 1)
        shift = m_new.masked_fill(m_new == float("-inf"), 0.0)
        p = torch.exp(s - shift)  # (B, H, T_q, b)
        alpha = torch.exp(m - shift)  # rescales what was summed under the old max
        # 4) rescale the old sum and accumulator, add this tile
        l = l * alpha + p.sum(dim=-1, keepdim=True)
        acc = acc * alpha + p @ v_tile  # (B, H, T_q, b) x (B, H, b, d_v) -> (B, H, T_q, d_v)
        m = m_new
    # 5) normalise once at the end; a query with no visible key has l = 0 and acc = 0: output 0
    return acc / l.masked_fill(l == 0, 1.0)
