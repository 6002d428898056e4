"""The reference MultiHeadAttention agrees with torch.nn.MultiheadAttention (weights mapped), in float64."""

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_multi_head_attention import checks as spec

solution = engine.load_solution(catalogue.find("multi_head_attention"))


def builtin_from(ours, c):
    """nn.MultiheadAttention holding our weights: in_proj = cat(W_q, W_k, W_v), out_proj = W_o."""
    theirs = nn.MultiheadAttention(c.D, c.H, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
        theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
        theirs.out_proj.weight.copy_(ours.W_o.weight)
        theirs.out_proj.bias.copy_(ours.W_o.bias)
    return theirs.eval()


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_nn_multihead_attention(c):
    torch.manual_seed(c.id)
    ours = solution.MultiHeadAttention(c.D, c.H).double().eval()
    x_q, x_kv, mask = spec.inputs(c, "float64")
    # Their boolean attn_mask means the opposite of ours: True = NOT allowed; shape (B*H, T_q, T_k).
    attn_mask = None if mask is None else (~mask).expand(c.B, c.H, c.T_q, c.T_k).reshape(c.B * c.H, c.T_q, c.T_k)
    with torch.no_grad():
        out, attn = ours(x_q, x_kv, mask)
        want_out, want_attn = builtin_from(ours, c)(x_q, x_kv, x_kv, attn_mask=attn_mask,
                                                    need_weights=True, average_attn_weights=False)
    torch.testing.assert_close(out, want_out, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(attn, want_attn, rtol=1e-12, atol=1e-12)


def test_builtin_bool_mask_means_not_allowed():
    """The convention translated above, checked by running: True in attn_mask hides a key."""
    theirs = nn.MultiheadAttention(4, 2, batch_first=True, dtype=torch.float64).eval()
    x = torch.randn(1, 3, 4, dtype=torch.float64)
    hide_future = torch.ones(3, 3, dtype=torch.bool).triu(1)
    _, attn = theirs(x, x, x, attn_mask=hide_future, average_attn_weights=False)
    assert (attn[0, :, hide_future] == 0).all()
