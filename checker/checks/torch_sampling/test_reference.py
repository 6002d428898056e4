"""The reference filter_logits and sample_next_token agree with independent definitions.

PyTorch has no built-in for top-k / top-p filtering: the test filters each row with Python lists
(sort, count k, add probabilities until top_p is reached), and checks the sampler's frequencies on
many draws, its use of the generator, and greedy decoding at temperature 0.
"""

import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_sampling import checks as spec
from checker.kit import matches

solution = engine.load_solution(catalogue.find("sampling"))


def filter_by_lists(logits, temperature, top_k, top_p):
    """Row by row: tempered logits; the k largest (ties kept); the nucleus by adding probabilities in order."""
    out = []
    for row in (logits / temperature).reshape(-1, logits.size(-1)).tolist():
        order = sorted(range(len(row)), key=lambda j: -row[j])
        keep = set(order)
        if top_k:
            kth = row[order[min(top_k, len(row)) - 1]]
            keep = {j for j in order if row[j] >= kth}
        if top_p is not None and top_p < 1.0:
            alive = [j for j in order if j in keep]
            z = sum(math.exp(row[j] - row[alive[0]]) for j in alive)
            total, nucleus = 0.0, set()
            for j in alive:
                if total >= top_p:
                    break
                nucleus.add(j)
                total += math.exp(row[j] - row[alive[0]]) / z
            keep = nucleus
        out.append([row[j] if j in keep else -math.inf for j in range(len(row))])
    return torch.tensor(out, dtype=torch.float64).reshape(logits.shape)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_filter_matches_row_by_row_lists(c):
    args = spec.inputs(c, "float64")
    got = solution.filter_logits(*args)
    assert got.dtype == torch.float64
    assert matches(got, filter_by_lists(*args))


@pytest.mark.parametrize("c", spec._SAMPLE_CASES, ids=lambda c: c.label)
def test_filter_matches_lists_on_the_sampling_cases(c):
    x = spec._sample_logits(c)
    assert matches(solution.filter_logits(x, c.temperature, c.top_k, c.top_p),
                   filter_by_lists(x, c.temperature, c.top_k, c.top_p))


def test_top_p_keeps_the_token_that_crosses_and_stops_at_an_exact_boundary():
    # probabilities 1/2, 1/4, 1/8, 1/8 up to rounding: top_p = 0.7 needs the second token, which crosses
    x = torch.log(torch.tensor([[0.5, 0.25, 0.125, 0.125]], dtype=torch.float64))
    assert torch.isfinite(solution.filter_logits(x, 1.0, None, 0.7)).tolist() == [[True, True, False, False]]
    assert torch.isfinite(solution.filter_logits(x, 1.0, None, 0.5)).tolist() == [[True, False, False, False]]


def test_temperature_must_be_positive():
    for t in (0.0, -1.0):
        with pytest.raises(ValueError):
            solution.filter_logits(torch.zeros(2, 3), t)


def test_every_named_mistake_differs_from_the_reference_on_some_case():
    for m in spec.MISTAKES:
        assert any(not matches(m.impl(*spec.inputs(c, "float64")), solution.filter_logits(*spec.inputs(c, "float64")))
                   for c in spec.CASES), m.name


def test_inputs_keep_clear_of_the_top_p_boundary_and_sampled_tokens_are_likely():
    for c in spec.CASES:
        assert spec._clear_of_boundaries(spec.inputs(c, "float64")[0], c.temperature, c.top_k, c.top_p)
    for c in spec._SAMPLE_CASES:
        p = solution.filter_logits(spec._sample_logits(c), c.temperature, c.top_k, c.top_p).softmax(-1)
        assert ((p == 0) | (p >= 0.02)).all()


@pytest.mark.parametrize("c", spec._SAMPLE_CASES, ids=lambda c: c.label)
def test_sampler_frequencies_fit_the_filtered_distribution(c):
    x = spec._sample_logits(c)
    g = torch.Generator().manual_seed(99)
    ids = solution.sample_next_token(x.repeat_interleave(spec._N, 0), c.temperature, c.top_k, c.top_p, g)
    assert ids.dtype == torch.int64 and ids.shape == (c.B * spec._N,)
    want = solution.filter_logits(x, c.temperature, c.top_k, c.top_p).softmax(-1)
    for b, row in enumerate(ids.view(c.B, spec._N)):
        counts = torch.bincount(row, minlength=c.V).double()
        assert (counts[want[b] == 0] == 0).all()
        assert spec.chi_square_p_value(counts, want[b])[0] > 1e-4


def test_chi_square_tail_is_the_textbook_value():
    # 5 categories (4 degrees of freedom) with statistic 9.4877: the 95th percentile, p = 0.05
    counts = torch.tensor([100.0, 100.0, 100.0, 100.0, 100.0 + math.sqrt(9.4877 * 80)])  # stat = 1.25 d^2 / 100
    counts[:4] -= (counts[4] - 100.0) / 4
    p_value, stat = spec.chi_square_p_value(counts, torch.full((5,), 0.2))
    assert abs(stat - 9.4877) < 1e-5 and abs(p_value - 0.05) < 1e-4
    assert spec.chi_square_p_value(torch.full((4,), 25.0), torch.full((4,), 0.25))[0] == 1.0


def test_same_generator_seed_same_draws_and_temperature_zero_is_argmax():
    x = torch.randn(4, 10, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    a = solution.sample_next_token(x, 0.9, 5, 0.9, torch.Generator().manual_seed(1))
    b = solution.sample_next_token(x, 0.9, 5, 0.9, torch.Generator().manual_seed(1))
    assert torch.equal(a, b)
    assert torch.equal(solution.sample_next_token(x, 0.0, 3, 0.5), x.argmax(-1))
