"""The RoPE reference against two independent formulas, in float64.

interleaved: Meta's LLaMA (complex numbers: x_{2i} + j x_{2i+1} times e^(j p theta_i));
half: Hugging Face's LLaMA (x * cos + rotate_half(x) * sin with cos/sin = cat([freqs, freqs])).
"""

import pytest
import torch

from checker.catalogue import find
from checker.checks.torch_rope import checks as checks
from checker.engine import load_solution

apply_rope = load_solution(find("rope")).apply_rope


def meta_llama(x, positions, base):
    d_k = x.size(-1)
    freqs = 1.0 / (base ** (torch.arange(0, d_k, 2, dtype=torch.float64)[: d_k // 2] / d_k))
    freqs_cis = torch.polar(torch.ones(len(positions), d_k // 2, dtype=torch.float64),
                            torch.outer(positions.double(), freqs))
    x_ = torch.view_as_complex(x.reshape(*x.shape[:-1], -1, 2))
    return torch.view_as_real(x_ * freqs_cis).flatten(3)


def hf_llama(x, positions, base):
    d_k = x.size(-1)
    inv_freq = 1.0 / (base ** (torch.arange(0, d_k, 2, dtype=torch.float64) / d_k))
    freqs = positions.double()[:, None] * inv_freq[None, :]
    emb = torch.cat((freqs, freqs), dim=-1)
    x1, x2 = x[..., : d_k // 2], x[..., d_k // 2:]
    return x * emb.cos() + torch.cat((-x2, x1), dim=-1) * emb.sin()


@pytest.mark.parametrize("c", checks.CASES + [checks.TIMING], ids=lambda c: c.label)
def test_reference_equals_the_llama_implementations(c):
    x, positions, _, base = checks.inputs(c, "float64")
    torch.testing.assert_close(apply_rope(x, positions, "interleaved", base), meta_llama(x, positions, base),
                               rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(apply_rope(x, positions, "half", base), hf_llama(x, positions, base),
                               rtol=1e-12, atol=1e-12)


def test_scores_depend_only_on_the_relative_position():
    q, k = torch.randn(1, 1, 1, 8, dtype=torch.float64), torch.randn(1, 1, 1, 8, dtype=torch.float64)
    for layout in ("half", "interleaved"):
        score = [(apply_rope(q, torch.tensor([m]), layout) * apply_rope(k, torch.tensor([n]), layout)).sum()
                 for m, n in ((5, 2), (105, 102), (3, 0))]
        torch.testing.assert_close(score[0], score[1], rtol=1e-12, atol=1e-12)
        torch.testing.assert_close(score[0], score[2], rtol=1e-12, atol=1e-12)


def test_the_checks_knobbed_formula_is_the_reference_when_no_knob_is_turned():
    for c in checks.CASES:
        args = checks.inputs(c, "float64")
        torch.testing.assert_close(checks.rope(*args), apply_rope(*args), rtol=1e-12, atol=1e-12)


def test_unknown_layout_raises():
    with pytest.raises(ValueError):
        apply_rope(torch.zeros(1, 1, 2, 4, dtype=torch.float64), torch.arange(2), "complex")
