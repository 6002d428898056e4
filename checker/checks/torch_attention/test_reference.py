"""The attention reference agrees with F.scaled_dot_product_attention (same mask convention)."""

import torch
import torch.nn.functional as F

from checker.checks.torch_attention import checks as checks
from checker.engine import load_solution
from checker.catalogue import find


def test_reference_equals_scaled_dot_product_attention_on_every_case():
    reference = load_solution(find("attention")).ScaledDotProductAttention().eval()
    for c in checks.CASES:
        Q, K, V, mask = checks.inputs(c, "float64")
        out, weights = reference(Q, K, V, mask)
        expected = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
        torch.testing.assert_close(out, expected, rtol=1e-12, atol=1e-12)
        assert torch.allclose(weights.sum(-1)[weights.sum(-1) > 0], torch.ones(()).double())


def test_fully_hidden_query_gives_zeros_like_the_builtin():
    Q, K, V = (torch.randn(1, 1, 3, 4, dtype=torch.float64) for _ in range(3))
    mask = torch.ones(3, 3, dtype=torch.bool)
    mask[1] = False
    out, weights = load_solution(find("attention")).ScaledDotProductAttention()(Q, K, V, mask)
    builtin = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
    assert torch.equal(out[0, 0, 1], torch.zeros(4, dtype=torch.float64))
    assert torch.equal(weights[0, 0, 1], torch.zeros(3, dtype=torch.float64))
    torch.testing.assert_close(out, builtin)
