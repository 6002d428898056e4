# followup: float32 arithmetic inside was recognised
"""vLLM's pieces, re-typed for one sequence: BlockPool.get_new_blocks (popleft from the free block queue, ValueError
when it holds too few), BlockTable.compute_slot_mapping (slot = block_table[p // b] * b + p % b),
reshape_and_cache_flash (the pool viewed as (N * b, H, d) and written by slot), and ref_paged_attn of
tests/kernels/attention/test_flash_attn.py (key_cache[block_indices].view(-1, H, d)[:kv_len], a triu mask with
diagonal kv_len - query_len + 1, scores in float32). Adapted: one sequence instead of a batch of them, the free queue
a tensor, q * scale instead of q *= scale (which would change the caller's q). The pools are written in place, as
reshape_and_cache_flash writes the cache: the contract accepts it for append's pools, and only for them."""
from collections import deque

import torch


def get_new_blocks(free_block_queue, num_blocks):
    if num_blocks > len(free_block_queue):
        raise ValueError(f"Cannot get {num_blocks} free blocks from the pool")
    return [free_block_queue.popleft() for _ in range(num_blocks)]


def compute_slot_mapping(block_table, positions, block_size):
    block_numbers = block_table[positions // block_size]
    return block_numbers * block_size + positions % block_size


def append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks):
    num_blocks, block_size, num_kv_heads, head_size = k_pool.shape
    num_tokens = k.shape[0]
    num_required_blocks = -(-(seq_len + num_tokens) // block_size)
    num_new_blocks = num_required_blocks - len(block_table)
    queue = deque(free_blocks.tolist())
    new_blocks = get_new_blocks(queue, max(num_new_blocks, 0))
    block_table = torch.cat([block_table, torch.tensor(new_blocks, dtype=torch.int64)])
    slot_mapping = compute_slot_mapping(block_table, torch.arange(seq_len, seq_len + num_tokens), block_size)
    key_cache = k_pool.view(num_blocks * block_size, num_kv_heads, head_size)
    value_cache = v_pool.view(num_blocks * block_size, num_kv_heads, head_size)
    key_cache[slot_mapping] = k
    value_cache[slot_mapping] = v
    return (key_cache.view(k_pool.shape), value_cache.view(v_pool.shape), block_table,
            torch.tensor(list(queue), dtype=torch.int64))


def gather(k_pool, v_pool, block_table, seq_len):
    _, block_size, num_kv_heads, head_size = k_pool.shape
    num_kv_blocks = (seq_len + block_size - 1) // block_size
    block_indices = block_table[:num_kv_blocks]
    k = k_pool[block_indices].view(-1, num_kv_heads, head_size)[:seq_len]
    v = v_pool[block_indices].view(-1, num_kv_heads, head_size)[:seq_len]
    return k, v


def attend(q, k_pool, v_pool, block_table, seq_len):
    query_len, kv_len = q.shape[0], seq_len
    scale = q.shape[-1] ** -0.5
    q = q * scale
    k, v = gather(k_pool, v_pool, block_table, kv_len)
    attn = torch.einsum("qhd,khd->hqk", q, k).float()
    empty_mask = torch.ones(query_len, kv_len, device=q.device)
    mask = torch.triu(empty_mask, diagonal=kv_len - query_len + 1).bool()
    attn.masked_fill_(mask, float("-inf"))
    attn = torch.softmax(attn, dim=-1).to(v.dtype)
    return torch.einsum("hqk,khd->qhd", attn, v)
