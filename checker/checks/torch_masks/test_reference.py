"""The reference masks agree with independent definitions: element-by-element loops, and PyTorch's own
causal mask (nn.Transformer.generate_square_subsequent_mask, and is_causal in scaled_dot_product_attention)."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_masks import checks as spec

solution = engine.load_solution(catalogue.find("masks"))


def loop_pad(tokens, pad_id):
    B, T = tokens.shape
    return torch.tensor([[[[tokens[b, j].item() != pad_id for j in range(T)]]] for b in range(B)])


def loop_decoder(tgt, pad_id):
    B, T = tgt.shape
    return torch.tensor([[[[j <= i and tgt[b, j].item() != pad_id for j in range(T)] for i in range(T)]]
                         for b in range(B)])


def loop_cross(src, tgt, pad_id):
    (B, T_s), T_t = src.shape, tgt.shape[1]
    return torch.tensor([[[[src[b, j].item() != pad_id for j in range(T_s)] for _ in range(T_t)]] for b in range(B)])


def same(actual, expected):
    assert actual.dtype == torch.bool and tuple(actual.shape) == tuple(expected.shape)
    assert torch.equal(actual, expected)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_pad_mask(c):
    tokens, pad_id = spec.inputs(c, "float64")
    same(solution.make_pad_mask(tokens, pad_id), loop_pad(tokens, pad_id))


@pytest.mark.parametrize("c", spec._SUBSEQUENT_CASES, ids=lambda c: c.label)
def test_subsequent_mask_is_pytorchs_causal_mask(c):
    theirs = nn.Transformer.generate_square_subsequent_mask(c.T)  # float: 0 where allowed, -inf above the diagonal
    same(solution.make_subsequent_mask(*spec.subsequent_args(c)), (theirs == 0).view(1, 1, c.T, c.T))


def test_subsequent_mask_means_is_causal_in_sdpa():
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    ours = F.scaled_dot_product_attention(q, k, v, attn_mask=solution.make_subsequent_mask(6))
    torch.testing.assert_close(ours, F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec._DECODER_CASES, ids=lambda c: c.label)
def test_decoder_mask(c):
    tgt, pad_id = spec.decoder_args(c)
    same(solution.make_decoder_mask(tgt, pad_id), loop_decoder(tgt, pad_id))


@pytest.mark.parametrize("c", spec._CROSS_CASES, ids=lambda c: c.label)
def test_cross_mask(c):
    src, tgt, pad_id = spec.cross_args(c)
    same(solution.make_cross_mask(src, tgt, pad_id), loop_cross(src, tgt, pad_id))


def test_decoder_mask_matches_nn_multihead_attention_masks():
    """The decoder mask in our convention = key_padding_mask + causal attn_mask in PyTorch's (True = hidden)."""
    c = spec._DECODER_CASES[1]
    tgt, pad_id = spec.decoder_args(c)
    B, T = tgt.shape
    torch.manual_seed(0)
    mha = nn.MultiheadAttention(8, 2, batch_first=True, dtype=torch.float64).eval()
    x = torch.randn(B, T, 8, dtype=torch.float64)
    causal = nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64) != 0  # True = hidden
    _, want = mha(x, x, x, key_padding_mask=tgt == pad_id, attn_mask=causal, average_attn_weights=False)
    hidden = ~solution.make_decoder_mask(tgt, pad_id)  # (B, 1, T, T)
    _, got = mha(x, x, x, attn_mask=hidden.expand(B, 2, T, T).reshape(B * 2, T, T), average_attn_weights=False)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
