"""A paged KV cache: a pool of fixed-size blocks, a block table per sequence (reference answer).

Shape legend:
    N    num_blocks in the pool
    b    block_size: tokens per block
    H    number of (KV) heads
    d_k  size per head (keys and values alike)
    n    blocks a sequence holds (its block table's length)
    L    seq_len: tokens a sequence holds
    T    new tokens appended
    T_q  queries attended (the last T_q positions of the sequence)

vLLM's PagedAttention layout, simplified: the pool of one layer is k_pool, v_pool (N, b, H, d_k) (its
FlashAttention backend's kv_cache of shape (2, N, b, H, d_k), split in two); token p of a sequence lives in
block block_table[p // b] at offset p % b (vLLM's slot = block_table[p // b] · b + p % b); free blocks are
handed out from the front of a queue (vLLM's FreeKVCacheBlockQueue.popleft), and a pool that has too few
raises ValueError (vLLM's BlockPool.get_new_blocks).
"""

import math

import torch
from torch import Tensor


def append(k_pool: Tensor, v_pool: Tensor, block_table: Tensor, seq_len: int, k: Tensor, v: Tensor,
           free_blocks: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    """Write T new tokens of one sequence into the pool, taking free blocks as the sequence crosses into them."""
    block_size = k_pool.shape[1]
    T = k.shape[0]
    # 1) the blocks seq_len + T tokens fill, beyond those the sequence already holds
    needed = (seq_len + T + block_size - 1) // block_size - block_table.shape[0]
    if needed > free_blocks.shape[0]:
        raise ValueError("the pool has too few free blocks for these tokens")
    # 2) take them from the front of the free queue
    block_table = torch.cat([block_table, free_blocks[:needed]])  # (n,) -> (n + needed,)
    free_blocks = free_blocks[needed:]
    # 3) each new token's slot: the block its position falls in, and its offset there
    positions = seq_len + torch.arange(T, device=k_pool.device)  # (T,) the new tokens' positions in the sequence
    blocks = block_table[positions // block_size]  # (T,) physical block ids
    offsets = positions % block_size  # (T,)
    # 4) write the tokens there (into copies: the caller's pools stay as they were)
    k_pool, v_pool = k_pool.clone(), v_pool.clone()
    k_pool[blocks, offsets] = k  # (T, H, d_k) into (N, b, H, d_k)
    v_pool[blocks, offsets] = v
    return k_pool, v_pool, block_table, free_blocks


def gather(k_pool: Tensor, v_pool: Tensor, block_table: Tensor, seq_len: int) -> tuple[Tensor, Tensor]:
    """The sequence's K and V, contiguous: (L, H, d_k) each, read through its block table."""
    # 1) each position's block (through the table) and offset
    positions = torch.arange(seq_len, device=k_pool.device)  # (L,)
    blocks = block_table[positions // k_pool.shape[1]]  # (L,)
    offsets = positions % k_pool.shape[1]  # (L,)
    # 2) read the slots in order
    return k_pool[blocks, offsets], v_pool[blocks, offsets]  # (L, H, d_k) each


def attend(q: Tensor, k_pool: Tensor, v_pool: Tensor, block_table: Tensor, seq_len: int) -> Tensor:
    """Causal attention of the sequence's last T_q positions over its L cached tokens."""
    T_q, H, d_k = q.shape
    # 1) the sequence's keys and values, contiguous
    k, v = gather(k_pool, v_pool, block_table, seq_len)  # (L, H, d_k)
    # 2) scaled scores per head
    scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(d_k)  # (T_q, H, d_k) x (L, H, d_k) -> (H, T_q, L)
    # 3) query i is position seq_len - T_q + i: it sees the keys up to it
    q_pos = torch.arange(T_q, device=q.device) + (seq_len - T_q)  # (T_q,)
    k_pos = torch.arange(seq_len, device=q.device)  # (L,)
    # 4) softmax over the keys it sees (the (T_q, L) mask broadcast over H), then the weighted sum of the values
    weights = torch.softmax(scores.masked_fill(k_pos[None, :] > q_pos[:, None], float("-inf")), dim=-1)  # (H, T_q, L)
    return torch.einsum("hqk,khd->qhd", weights, v)  # (H, T_q, L) x (L, H, d_k) -> (T_q, H, d_k)
