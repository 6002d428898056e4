"""The reference append, gather and attend equal vLLM's paged attention and its slot mapping.

vLLM: ref_paged_attn of tests/kernels/attention/test_flash_attn.py (vllm-project/vllm), the reference its
paged-attention kernels are tested against, re-typed offline (one layer, no sliding window, no soft cap, as many
KV heads as query heads); the slot mapping of vllm/v1/worker/block_table.py (BlockTable.compute_slot_mapping:
block_table[p // block_size] * block_size + p % block_size) with reshape_and_cache_flash's write by slot.
"""

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_paged_kv_cache import checks as spec

solution = engine.load_solution(catalogue.find("paged_kv_cache"))


def ref_paged_attn(query, key_cache, value_cache, query_lens, kv_lens, block_tables, scale):
    """vLLM's function, unchanged but for the arguments left out (sliding_window, soft_cap) and q * scale in place
    of q *= scale (a view of the caller's query)."""
    num_seqs = len(query_lens)
    block_tables = block_tables.cpu().numpy()
    _, block_size, num_kv_heads, head_size = key_cache.shape
    outputs = []
    start_idx = 0
    for i in range(num_seqs):
        query_len = query_lens[i]
        kv_len = kv_lens[i]
        q = query[start_idx:start_idx + query_len]
        q = q * scale
        num_kv_blocks = (kv_len + block_size - 1) // block_size
        block_indices = block_tables[i, :num_kv_blocks]
        k = key_cache[block_indices].view(-1, num_kv_heads, head_size)
        k = k[:kv_len]
        v = value_cache[block_indices].view(-1, num_kv_heads, head_size)
        v = v[:kv_len]
        attn = torch.einsum("qhd,khd->hqk", q, k)
        empty_mask = torch.ones(query_len, kv_len)
        mask = torch.triu(empty_mask, diagonal=kv_len - query_len + 1).bool()
        attn.masked_fill_(mask, float("-inf"))
        attn = torch.softmax(attn, dim=-1).to(v.dtype)
        out = torch.einsum("hqk,khd->qhd", attn, v)
        outputs.append(out)
        start_idx += query_len
    return torch.cat(outputs, dim=0)


def compute_slot_mapping(block_table, positions, block_size):
    block_numbers = block_table[positions // block_size]
    return block_numbers * block_size + positions % block_size


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_attend_equals_vllms_ref_paged_attn(c):
    q, k_pool, v_pool, table, L = spec.inputs(c, "float64")
    want = ref_paged_attn(q, k_pool, v_pool, [c.T_q], [L], table[None], c.d_k ** -0.5)
    torch.testing.assert_close(solution.attend(q, k_pool, v_pool, table, L), want, rtol=1e-12, atol=1e-12)


def test_attend_over_two_sequences_in_one_pool_equals_vllms_batch():
    c = spec.CASES[1]
    _, k_pool, v_pool, _, _ = spec.inputs(c, "float64")
    g = torch.Generator().manual_seed(3)
    perm = torch.randperm(c.N, generator=g)
    tables = torch.stack([perm[:3], perm[3:6]])  # two sequences, disjoint blocks
    kv_lens, query_lens = [8, 7], [3, 1]
    query = torch.randn(sum(query_lens), c.H, c.d_k, generator=g, dtype=torch.float64)
    want = ref_paged_attn(query, k_pool, v_pool, query_lens, kv_lens, tables, c.d_k ** -0.5)
    got = torch.cat([solution.attend(query[:3], k_pool, v_pool, tables[0], 8),
                     solution.attend(query[3:], k_pool, v_pool, tables[1], 7)])
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec._APPEND_CASES, ids=lambda c: c.label)
def test_append_writes_by_vllms_slot_mapping_and_takes_blocks_from_the_front(c):
    k_pool, v_pool, table, L, k, v, free = spec._append_inputs(c)
    new_k, new_v, new_table, new_free = solution.append(k_pool, v_pool, table, L, k, v, free)
    needed = -(-(L + c.T) // c.b) - len(table)
    assert new_table.tolist() == table.tolist() + free[:needed].tolist() and new_free.tolist() == free[needed:].tolist()
    slots = compute_slot_mapping(new_table, torch.arange(L, L + c.T), c.b)
    want_k = k_pool.clone().view(-1, c.H, c.d_k)
    want_k[slots] = k  # reshape_and_cache_flash: key_cache viewed by slot
    torch.testing.assert_close(new_k, want_k.view(k_pool.shape), rtol=0, atol=0)
    assert torch.equal(spec._append(k_pool, v_pool, table, L, k, v, free)[1], new_v)  # the checks' own copy agrees


def test_gather_returns_the_tokens_appended_and_append_raises_when_out_of_blocks():
    c = spec._RUN
    k_pool, v_pool = spec._pools(c, "float64")
    free = torch.arange(c.N)
    table = torch.zeros(0, dtype=torch.int64)
    k = torch.randn(c.b * c.N, c.H, c.d_k, dtype=torch.float64)
    k_pool, v_pool, table, free = solution.append(k_pool, v_pool, table, 0, k[:5], k[:5], free)
    k_pool, v_pool, table, free = solution.append(k_pool, v_pool, table, 5, k[5:6], k[5:6], free)
    assert table.tolist() == [0, 1] and free.tolist() == list(range(2, c.N))
    torch.testing.assert_close(solution.gather(k_pool, v_pool, table, 6)[0], k[:6], rtol=0, atol=0)
    with pytest.raises(ValueError):
        solution.append(k_pool, v_pool, table, 6, k, k, free)


def test_the_run_runs_out_of_blocks_at_its_last_step():
    c = spec._RUN
    held = {"A": 0, "B": 0}
    used = 0
    for i, (seq, T) in enumerate(spec._STEPS):
        blocks = -(-(held[seq] + T) // c.b) - -(-held[seq] // c.b)
        assert (used + blocks > c.N) == (i == len(spec._STEPS) - 1)
        used, held[seq] = used + blocks, held[seq] + T
