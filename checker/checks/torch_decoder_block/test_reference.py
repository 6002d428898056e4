"""The reference SimpleDecoder agrees with torch.nn.TransformerEncoderLayer, in float64.

A decoder-only block is an encoder layer run with a causal mask: nn.TransformerEncoderLayer with
norm_first=False (post-norm), activation="relu", dim_feedforward=4*D, dropout=0, batch_first=True,
our weights mapped (in_proj = cat(q_proj, k_proj, v_proj), out_proj = o_proj, linear1 = up_proj,
linear2 = down_proj, norm1 = layernorm_att, norm2 = layernorm_ffn). Its boolean masks mean the
opposite of ours: True = NOT allowed.
"""

import math

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_decoder_block import checks as spec

solution = engine.load_solution(catalogue.find("decoder_block"))


def ours_for(c):
    torch.manual_seed(c.id)
    ours = solution.SimpleDecoder(c.D, c.H).double().eval()
    with torch.no_grad():  # move LayerNorm away from gamma=1, beta=0
        for p in ours.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return ours


def builtin_from(ours, c):
    theirs = nn.TransformerEncoderLayer(c.D, c.H, dim_feedforward=4 * c.D, dropout=0.0, activation="relu",
                                        batch_first=True, norm_first=False, dtype=torch.float64)
    with torch.no_grad():
        theirs.self_attn.in_proj_weight.copy_(torch.cat([ours.q_proj.weight, ours.k_proj.weight, ours.v_proj.weight]))
        theirs.self_attn.in_proj_bias.copy_(torch.cat([ours.q_proj.bias, ours.k_proj.bias, ours.v_proj.bias]))
        theirs.self_attn.out_proj.load_state_dict(ours.o_proj.state_dict())
        theirs.linear1.load_state_dict(ours.up_proj.state_dict())
        theirs.linear2.load_state_dict(ours.down_proj.state_dict())
        theirs.norm1.load_state_dict(ours.layernorm_att.state_dict())
        theirs.norm2.load_state_dict(ours.layernorm_ffn.state_dict())
    return theirs.eval()


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_nn_transformer_encoder_layer_with_a_causal_mask(c):
    ours = ours_for(c)
    X, pad_mask = spec.inputs(c, "float64")
    future = torch.ones(c.T, c.T, dtype=torch.bool).triu(1)  # True = NOT allowed
    key_padding = None if pad_mask is None else ~pad_mask  # True = PAD = NOT allowed
    with torch.no_grad():
        got = ours(X, pad_mask)
        want = builtin_from(ours, c)(X, src_mask=future, src_key_padding_mask=key_padding, is_causal=True)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_a_query_that_sees_no_key_gets_o_proj_bias_as_attention_output():
    """Independent formula for the rows the built-in turns into NaN: LN_ffn(H + FFN(H)), H = LN_att(x + b_o)."""
    c = spec._EMPTY_ROWS
    ours = ours_for(c)
    X, pad_mask = spec.inputs(c, "float64")
    with torch.no_grad():
        got = ours(X, pad_mask)
        H = ours.layernorm_att(X[1, :2] + ours.o_proj.bias)
        want = ours.layernorm_ffn(H + ours.down_proj(torch.relu(ours.up_proj(H))))
    torch.testing.assert_close(got[1, :2], want, rtol=1e-12, atol=1e-12)
    # the other rows still match the built-in
    theirs = builtin_from(ours, c)
    future = torch.ones(c.T, c.T, dtype=torch.bool).triu(1)
    with torch.no_grad():
        builtin = theirs(X, src_mask=future, src_key_padding_mask=~pad_mask)
    keep = torch.ones(c.B, c.T, dtype=torch.bool)
    keep[1, :2] = False
    torch.testing.assert_close(got[keep], builtin[keep], rtol=1e-12, atol=1e-12)


def test_independent_formula_on_one_position():
    """Position t of batch item 0, written out with loops over heads: no shared code with the reference."""
    c = spec.CASES[1]
    ours = ours_for(c)
    X, pad_mask = spec.inputs(c, "float64")
    t, d = 3, c.D // c.H
    with torch.no_grad():
        got = ours(X, pad_mask)[0, t]
        x = X[0]
        heads = []
        for h in range(c.H):
            cols = slice(h * d, (h + 1) * d)
            q = (x[t] @ ours.q_proj.weight.T + ours.q_proj.bias)[cols]
            k = (x @ ours.k_proj.weight.T + ours.k_proj.bias)[:, cols]
            v = (x @ ours.v_proj.weight.T + ours.v_proj.bias)[:, cols]
            visible = [j for j in range(t + 1) if pad_mask[0, j]]
            s = torch.stack([q @ k[j] / math.sqrt(d) for j in visible])
            w = torch.exp(s - s.max()) / torch.exp(s - s.max()).sum()
            heads.append(sum(w[i] * v[j] for i, j in enumerate(visible)))
        a = torch.cat(heads) @ ours.o_proj.weight.T + ours.o_proj.bias

        def ln(z, norm):
            return (z - z.mean()) / torch.sqrt(z.var(unbiased=False) + 1e-5) * norm.weight + norm.bias

        h1 = ln(x[t] + a, ours.layernorm_att)
        want = ln(h1 + torch.relu(h1 @ ours.up_proj.weight.T + ours.up_proj.bias) @ ours.down_proj.weight.T
                  + ours.down_proj.bias, ours.layernorm_ffn)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_builtin_bool_masks_mean_not_allowed():
    """The convention translated above, checked by running: True in src_key_padding_mask hides a key."""
    torch.manual_seed(0)
    layer = nn.TransformerEncoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True, dtype=torch.float64).eval()
    x = torch.randn(1, 3, 4, dtype=torch.float64)
    hide_last = torch.tensor([[False, False, True]])
    with torch.no_grad():
        a = layer(x, src_key_padding_mask=hide_last)
        x2 = x.clone()
        x2[0, 2] += 5.0
        b = layer(x2, src_key_padding_mask=hide_last)
    torch.testing.assert_close(a[0, :2], b[0, :2])  # the hidden key's content changes nothing
