"""The reference counts equal real torch modules (parameters), torch.utils.flop_counter (FLOPs, counting
2 per multiply-add) and real tensors' nbytes (KV cache): independent of the reference's formulas."""

import pytest
import torch
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from checker import catalogue, engine
from checker.checks.torch_transformer_arithmetic import checks as spec

solution = engine.load_solution(catalogue.find("transformer_arithmetic"))


def numel(module):
    return sum(p.numel() for p in module.parameters())


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
@pytest.mark.parametrize("bias", [True, False])
def test_layer_counts_match_torch_modules(c, bias):
    assert solution.mha_params(c.D, c.H, bias) == numel(nn.MultiheadAttention(c.D, c.H, bias=bias, device="meta"))
    assert solution.encoder_layer_params(c.D, c.H, c.d_ff, bias) == numel(
        nn.TransformerEncoderLayer(c.D, c.H, c.d_ff, bias=bias, device="meta"))
    assert solution.decoder_layer_params(c.D, c.H, c.d_ff, bias) == numel(
        nn.TransformerDecoderLayer(c.D, c.H, c.d_ff, bias=bias, device="meta"))


@pytest.mark.parametrize("tie", [False, True])
def test_whole_model_matches_the_kata_transformer(tie):
    """The transformer kata's own reference module (seed 003's model; biases everywhere), tied or not."""
    bias = True
    ref = engine.load_solution(catalogue.find("transformer"))
    c = spec.CASES[1]
    model = ref.Transformer(c.V_s, c.V_t, c.D, c.H, c.d_ff, c.N, dropout=0.0)
    if tie:
        model.out_proj.weight = model.tgt_embed.weight
    assert solution.transformer_params(c.V_s, c.V_t, c.D, c.H, c.d_ff, c.N, bias, tie) == numel(model)


def test_seed_003_numbers():
    d = 512
    assert solution.mha_params(d, 8, False) == 4 * d * d
    assert solution.encoder_layer_params(d, 8, 4 * d, False) - 2 * d == 12 * d * d
    assert solution.decoder_layer_params(d, 8, 4 * d, False) - 3 * d == 16 * d * d


@pytest.mark.parametrize("sizes", spec._FLOP_CASES)
def test_flops_match_torch_flop_counter(sizes):
    B, T_q, T_k, D, H, d_ff = sizes
    mha = nn.MultiheadAttention(D, H, bias=False, batch_first=True)
    x_q, x_kv = torch.randn(B, T_q, D), torch.randn(B, T_k, D)
    with FlopCounterMode(display=False) as counter:
        mha(x_q, x_kv, x_kv, need_weights=True)  # the explicit bmm path, which the counter sees
    assert solution.attention_flops(B, T_q, T_k, D, H) == counter.get_total_flops()
    ffn = nn.Sequential(nn.Linear(D, d_ff, bias=False), nn.ReLU(), nn.Linear(d_ff, D, bias=False))
    with FlopCounterMode(display=False) as counter:
        ffn(x_q)
    assert solution.ffn_flops(B, T_q, D, d_ff) == counter.get_total_flops()


@pytest.mark.parametrize("dtype", spec._DTYPES)
def test_kv_cache_matches_real_tensors(dtype):
    B, T, N, H_kv, d_k = 2, 7, 3, 5, 4
    cache = [(torch.zeros(B, H_kv, T, d_k, dtype=dtype), torch.zeros(B, H_kv, T, d_k, dtype=dtype)) for _ in range(N)]
    assert solution.kv_cache_bytes(B, T, N, H_kv, d_k, dtype) == sum(k.nbytes + v.nbytes for k, v in cache)


def test_results_are_exact_ints_at_scale():
    got = solution.attention_flops(*spec._HUGE_FLOPS[:5])
    assert type(got) is int and got > 2 ** 53
    assert solution.kv_cache_bytes(*spec._LLAMA_KV[:6]) == 2 * 1024 ** 3
