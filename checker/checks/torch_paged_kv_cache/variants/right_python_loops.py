"""The interview answer with Python lists and loops: the block table and the free queue as lists of ints, one token
at a time into block p // b at offset p % b, a new block taken when a token starts one, and attention one head and one
query at a time over the gathered keys (a plain softmax of the scores it may see)."""
import math

import torch


def append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks):
    block_size = k_pool.shape[1]
    table, free = block_table.tolist(), free_blocks.tolist()
    total_blocks = (seq_len + k.shape[0] + block_size - 1) // block_size
    if total_blocks - len(table) > len(free):
        raise ValueError("not enough free blocks")
    k_pool, v_pool = k_pool.clone(), v_pool.clone()
    for i in range(k.shape[0]):
        p = seq_len + i
        if p // block_size == len(table):
            table.append(free.pop(0))
        k_pool[table[p // block_size], p % block_size] = k[i]
        v_pool[table[p // block_size], p % block_size] = v[i]
    return k_pool, v_pool, torch.tensor(table, dtype=torch.int64), torch.tensor(free, dtype=torch.int64)


def gather(k_pool, v_pool, block_table, seq_len):
    block_size = k_pool.shape[1]
    table = block_table.tolist()
    ks = [k_pool[table[p // block_size], p % block_size] for p in range(seq_len)]
    vs = [v_pool[table[p // block_size], p % block_size] for p in range(seq_len)]
    if not ks:
        return k_pool.new_zeros(0, *k_pool.shape[2:]), v_pool.new_zeros(0, *v_pool.shape[2:])
    return torch.stack(ks), torch.stack(vs)


def attend(q, k_pool, v_pool, block_table, seq_len):
    k, v = gather(k_pool, v_pool, block_table, seq_len)
    T_q, H, d_k = q.shape
    out = torch.zeros_like(q)
    for h in range(H):
        for i in range(T_q):
            last = seq_len - T_q + i  # this query's position: it sees keys 0 .. last
            scores = k[: last + 1, h] @ q[i, h] / math.sqrt(d_k)
            out[i, h] = torch.softmax(scores, dim=0) @ v[: last + 1, h]
    return out
