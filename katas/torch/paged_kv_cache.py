"""A paged KV cache (vLLM's PagedAttention): a pool of fixed-size blocks and a block table per sequence.

Shape legend:
    N    num_blocks in the pool
    b    block_size: tokens per block
    H    number of (KV) heads
    d_k  size per head (keys and values alike)
    n    blocks a sequence holds: the length of its block table
    L    seq_len: tokens the sequence holds (n = ceil(L / b))
    T    new tokens appended (T >= 0)
    T_q  queries attended: the LAST T_q positions of the sequence (1 <= T_q <= L)

A serving engine keeps the K and V of every running sequence in one pool of blocks, and each sequence
owns a list of blocks, its block table, so that memory is allocated a block at a time and never needs
to be contiguous. The layout is vLLM's (Kwon et al. 2023), simplified to one layer:

    k_pool, v_pool   (N, b, H, d_k)         vLLM's FlashAttention backend's kv_cache (2, N, b, H, d_k), split
    token p of a sequence lives in block block_table[p // b], at offset p % b
                     (vLLM's slot mapping: slot = block_table[p // b] · b + p % b)
    free_blocks      the free block ids, handed out from the FRONT (vLLM's FreeKVCacheBlockQueue.popleft)

A class would hold the pool, the free queue and one block table per sequence; here that state is passed
in and returned, so that every step can be checked on its own.

1. append(k_pool, v_pool, block_table, seq_len, k, v, free_blocks)
       -> (k_pool, v_pool, block_table, free_blocks)
   writes the T new tokens of one sequence at positions seq_len .. seq_len + T - 1: first into the
   free slots of its last block, then into new blocks taken from the front of free_blocks, as many as
   ceil((seq_len + T) / b) - n. When free_blocks holds fewer than that, raise ValueError (as vLLM's
   BlockPool.get_new_blocks) and write nothing. Return the pools with the tokens written (writing in
   place into the given pools, as vLLM does, or into copies: both are accepted), the block table with
   the new blocks added at its end, and the free blocks left, in their order.

2. gather(k_pool, v_pool, block_table, seq_len) -> (k, v): the sequence's L keys and values, in order,
   contiguous: (L, H, d_k) each. The last block may be partly filled: only L tokens are read.

3. attend(q, k_pool, v_pool, block_table, seq_len) -> out: causal attention of the sequence's last T_q
   positions over its L cached tokens, per head: query i (position L - T_q + i) sees keys 0 .. L - T_q + i,

       out[i, h] = softmax_j(q[i, h] · k[j, h] / √d_k) · v[j, h]

   equal to attention over the contiguous cache.

Arguments:
    k_pool, v_pool  (N, b, H, d_k) float
    block_table     (n,) int64 block ids; an empty sequence has an empty table (shape (0,))
    seq_len         int L >= 0
    k, v            (T, H, d_k) float, the pools' dtype
    free_blocks     (F,) int64 block ids, front first
    q               (T_q, H, d_k) float
append returns k_pool, v_pool (N, b, H, d_k), block_table (n + new,) int64, free_blocks (F - new,) int64.
gather returns (L, H, d_k) twice; attend returns (T_q, H, d_k), the pools' dtype.

Rules: do not modify q, k, v, block_table or free_blocks.
Off limits: vllm, torch.nn.functional.scaled_dot_product_attention.
"""

import torch
from torch import Tensor


def append(k_pool: Tensor, v_pool: Tensor, block_table: Tensor, seq_len: int, k: Tensor, v: Tensor,
           free_blocks: Tensor) -> tuple[Tensor, Tensor, Tensor, Tensor]:
    raise NotImplementedError("write append: new blocks from the front of free_blocks, then each token at its slot")


def gather(k_pool: Tensor, v_pool: Tensor, block_table: Tensor, seq_len: int) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write gather: position p is block_table[p // b], offset p % b")


def attend(q: Tensor, k_pool: Tensor, v_pool: Tensor, block_table: Tensor, seq_len: int) -> Tensor:
    raise NotImplementedError("write attend: gather, then causal attention of the last T_q positions")
