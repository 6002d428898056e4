"""The NumPy multi-head attention reference agrees with torch.nn.MultiheadAttention (no bias, weights mapped)."""

import numpy as np
import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.numpy_multi_head_attention import checks as spec

solution = engine.load_solution(catalogue.find("numpy/multi_head_attention"))


def builtin_from(Wq, Wk, Wv, Wo, d_model, num_heads):
    """nn.MultiheadAttention holding our weights. Ours is x @ W, theirs x @ weight.T: weight = W.T."""
    theirs = nn.MultiheadAttention(d_model, num_heads, bias=False, batch_first=True, dtype=torch.float64)
    with torch.no_grad():
        theirs.in_proj_weight.copy_(torch.from_numpy(np.concatenate([Wq.T, Wk.T, Wv.T])))
        theirs.out_proj.weight.copy_(torch.from_numpy(Wo.T))
    return theirs.eval()


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_nn_multihead_attention(c):
    q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo = spec.inputs(c, "float64")
    out, weights = solution.multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo)
    B, T_q, T_k = q.shape[0], q.shape[1], k.shape[1]
    # Their boolean attn_mask means the opposite of ours: True = NOT allowed; shape (B*H, T_q, T_k).
    attn_mask = None if mask is None else torch.from_numpy(
        ~np.broadcast_to(mask, (B, num_heads, T_q, T_k)).reshape(B * num_heads, T_q, T_k))
    theirs = builtin_from(Wq, Wk, Wv, Wo, d_model, num_heads)
    with torch.no_grad():
        want_out, want_w = theirs(*(torch.from_numpy(a) for a in (q, k, v)), attn_mask=attn_mask,
                                  need_weights=True, average_attn_weights=False)
    # A query that sees no key: theirs gives NaN there, ours zeros (the catalogue's convention).
    hidden_rows = np.zeros((B, num_heads, T_q), dtype=bool) if mask is None else \
        ~np.broadcast_to(mask, (B, num_heads, T_q, T_k)).any(-1)
    want_w = torch.where(torch.from_numpy(hidden_rows)[..., None], 0.0, want_w).numpy()
    assert out.shape == (B, T_q, d_model) and weights.shape == (B, num_heads, T_q, T_k)
    np.testing.assert_allclose(weights, want_w, rtol=1e-12, atol=1e-13)
    fine = ~hidden_rows.any(axis=1)  # (B, T_q): positions whose queries see something in every head
    np.testing.assert_allclose(out[fine], want_out.numpy()[fine], rtol=1e-12, atol=1e-13)


def test_builtin_bool_mask_means_not_allowed():
    """The convention translated above, checked by running: True in attn_mask hides a key."""
    theirs = nn.MultiheadAttention(4, 2, bias=False, batch_first=True, dtype=torch.float64).eval()
    x = torch.randn(1, 3, 4, dtype=torch.float64)
    hide_future = torch.ones(3, 3, dtype=torch.bool).triu(1)
    _, attn = theirs(x, x, x, attn_mask=hide_future, average_attn_weights=False)
    assert (attn[0, :, hide_future] == 0).all()


def test_split_and_combine_heads_are_inverse_and_cut_features_per_head():
    x = np.arange(2 * 5 * 12, dtype=np.float64).reshape(2, 5, 12)
    heads = solution.split_heads(x, 3, 4)
    assert heads.shape == (2, 3, 5, 4)
    np.testing.assert_array_equal(heads[1, 2, 3], x[1, 3, 8:12])  # head 2 of position 3 = features 8..11
    np.testing.assert_array_equal(solution.combine_heads(heads), x)
