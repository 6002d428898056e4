# expect: reads index 3 of an axis of size 3
"""gather looks the block up with p % b and the offset with p // b: the two halves of the slot swapped."""
import math

import torch


def append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks):
    b = k_pool.shape[1]
    T = k.shape[0]
    need = (seq_len + T + b - 1) // b - len(block_table)
    if need > len(free_blocks):
        raise ValueError("out of blocks")
    block_table = torch.cat([block_table, free_blocks[:need]])
    free_blocks = free_blocks[need:]
    pos = torch.arange(seq_len, seq_len + T)
    k_pool = k_pool.clone()
    v_pool = v_pool.clone()
    k_pool[block_table[pos // b], pos % b] = k
    v_pool[block_table[pos // b], pos % b] = v
    return k_pool, v_pool, block_table, free_blocks


def gather(k_pool, v_pool, block_table, seq_len):
    b = k_pool.shape[1]
    pos = torch.arange(seq_len, device=k_pool.device)
    return k_pool[block_table[pos % b], pos // b], v_pool[block_table[pos % b], pos // b]


def attend(q, k_pool, v_pool, block_table, seq_len):
    T_q = q.shape[0]
    k, v = gather(k_pool, v_pool, block_table, seq_len)
    scores = torch.einsum("qhd,khd->hqk", q, k) / math.sqrt(q.shape[-1])
    rows = torch.arange(T_q, device=q.device)[:, None] + (seq_len - T_q)
    cols = torch.arange(seq_len, device=q.device)[None, :]
    scores = scores.masked_fill(cols > rows, float("-inf"))
    return torch.einsum("hqk,khd->qhd", torch.softmax(scores, dim=-1), v)
