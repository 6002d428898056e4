"""The pool seen as one flat array of slots (N · b, H, d_k), as vLLM's reshape_and_cache_flash indexes it: the slot
mapping of the new tokens, index_copy into the slots, index_select out of them, and a causal mask from tril."""
import math

import torch


def _slots(block_table, start, stop, block_size):
    pos = torch.arange(start, stop, device=block_table.device)
    return block_table[torch.div(pos, block_size, rounding_mode="floor")] * block_size + torch.remainder(pos, block_size)


def append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks):
    N, b, H, d = k_pool.shape
    new_len = seq_len + k.shape[0]
    extra = math.ceil(new_len / b) - block_table.numel()
    if extra > free_blocks.numel():
        raise ValueError(f"need {extra} blocks, {free_blocks.numel()} free")
    block_table = torch.cat((block_table, free_blocks[:extra]))
    slots = _slots(block_table, seq_len, new_len, b)
    k_flat = k_pool.reshape(N * b, H, d).index_copy(0, slots, k)
    v_flat = v_pool.reshape(N * b, H, d).index_copy(0, slots, v)
    return k_flat.view(N, b, H, d), v_flat.view(N, b, H, d), block_table, free_blocks[extra:]


def gather(k_pool, v_pool, block_table, seq_len):
    N, b, H, d = k_pool.shape
    slots = _slots(block_table, 0, seq_len, b)
    return k_pool.reshape(N * b, H, d).index_select(0, slots), v_pool.reshape(N * b, H, d).index_select(0, slots)


def attend(q, k_pool, v_pool, block_table, seq_len):
    k, v = gather(k_pool, v_pool, block_table, seq_len)
    T_q = q.shape[0]
    scores = q.permute(1, 0, 2) @ k.permute(1, 2, 0) / math.sqrt(q.shape[-1])  # (H, T_q, L)
    visible = torch.ones(T_q, seq_len, dtype=torch.bool, device=q.device).tril(seq_len - T_q)
    weights = scores.masked_fill(~visible, float("-inf")).softmax(dim=-1)
    return (weights @ v.permute(1, 0, 2)).permute(1, 0, 2)  # (H, T_q, d) -> (T_q, H, d)
