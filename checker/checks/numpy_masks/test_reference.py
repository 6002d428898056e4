"""The NumPy mask references agree with PyTorch's causal mask and with an independent padding formula."""

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine

solution = engine.load_solution(catalogue.find("numpy/masks"))


@pytest.mark.parametrize("T", [1, 2, 5, 8])
def test_causal_mask_is_the_visible_part_of_torch_square_subsequent_mask(T):
    # PyTorch's additive mask: 0 where a query may attend, -inf where it may not.
    additive = torch.nn.Transformer.generate_square_subsequent_mask(T, dtype=torch.float64).numpy()
    got = solution.make_causal_mask(T)
    assert got.dtype == np.bool_ and got.shape == (T, T)
    np.testing.assert_array_equal(got, additive == 0)


def test_causal_mask_means_the_same_as_is_causal_in_torch_attention():
    # Same convention as F.scaled_dot_product_attention: a bool attn_mask with True = may attend.
    g = torch.Generator().manual_seed(0)
    q, k, v = (torch.randn(2, 3, 6, 4, generator=g, dtype=torch.float64) for _ in range(3))
    mask = torch.from_numpy(solution.make_causal_mask(6))
    np.testing.assert_allclose(F.scaled_dot_product_attention(q, k, v, attn_mask=mask),
                               F.scaled_dot_product_attention(q, k, v, is_causal=True), rtol=1e-12)


@pytest.mark.parametrize("pad_id", [0, 1, 7])
def test_pad_mask_marks_real_tokens(pad_id):
    tokens = np.array([[5, 3, 0, 1, 7, pad_id], [pad_id, pad_id, 2, 9, 0, 1]])
    got = solution.make_pad_mask(tokens, pad_id)
    expected = np.empty((2, 1, 1, 6), dtype=bool)
    for b in range(2):
        for t in range(6):
            expected[b, 0, 0, t] = tokens[b, t] != pad_id
    assert got.dtype == np.bool_
    np.testing.assert_array_equal(got, expected)
    scores = np.zeros((2, 3, 4, 6))  # (B, H, T_q, T_k): the mask broadcasts over heads and queries
    assert np.broadcast_shapes(got.shape, scores.shape) == scores.shape
