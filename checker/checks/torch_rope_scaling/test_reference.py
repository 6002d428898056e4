"""The reference rope_inv_freq and rope_attention_factor equal transformers' modeling_rope_utils.

transformers (huggingface/transformers at 0044e3b, v4.44): _compute_default_rope_parameters,
_compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters and _compute_yarn_parameters, re-typed
offline with the config's fields as arguments and float64 in place of their float32 (so that the comparison is
exact); YaRN's ramp also against the paper's formula (Peng et al. 2023, eq. 17-18 and 22).
"""

import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_rope_scaling import checks as spec

solution = engine.load_solution(catalogue.find("rope_scaling"))


def _compute_default_rope_parameters(base, dim):
    attention_factor = 1.0
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim))
    return inv_freq, attention_factor


def _compute_linear_scaling_rope_parameters(base, dim, factor):
    inv_freq, attention_factor = _compute_default_rope_parameters(base, dim)
    inv_freq /= factor
    return inv_freq, attention_factor


def _compute_dynamic_ntk_parameters(base, dim, max_position_embeddings, factor, seq_len=None):
    attention_factor = 1.0
    seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).double() / dim))
    return inv_freq, attention_factor


def _compute_yarn_parameters(base, dim, max_position_embeddings, factor, beta_fast=None, beta_slow=None,
                             attention_factor=None):
    if attention_factor is None:
        attention_factor = 0.1 * math.log(factor) + 1.0
    beta_fast = beta_fast or 32
    beta_slow = beta_slow or 1

    def find_correction_dim(num_rotations, dim, base, max_position_embeddings):
        return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))

    def find_correction_range(low_rot, high_rot, dim, base, max_position_embeddings):
        low = math.floor(find_correction_dim(low_rot, dim, base, max_position_embeddings))
        high = math.ceil(find_correction_dim(high_rot, dim, base, max_position_embeddings))
        return max(low, 0), min(high, dim - 1)

    def linear_ramp_factor(min, max, dim):
        if min == max:
            max += 0.001
        linear_func = (torch.arange(dim, dtype=torch.float64) - min) / (max - min)
        return torch.clamp(linear_func, 0, 1)

    pos_freqs = base ** (torch.arange(0, dim, 2).double() / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, max_position_embeddings)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).double()
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, attention_factor


def _hf(rope_type, head_dim, base, factor, L, seq_len, beta_fast, beta_slow):
    if rope_type == "default":
        return _compute_default_rope_parameters(base, head_dim)
    if rope_type == "linear":
        return _compute_linear_scaling_rope_parameters(base, head_dim, factor)
    if rope_type == "dynamic":
        return _compute_dynamic_ntk_parameters(base, head_dim, L, factor, seq_len)
    return _compute_yarn_parameters(base, head_dim, L, factor, beta_fast, beta_slow)


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_reference_equals_transformers_rope_functions(c):
    args = spec.inputs(c, "float64")
    want, want_factor = _hf(*args[:-1])
    torch.testing.assert_close(solution.rope_inv_freq(*args), want, rtol=1e-13, atol=0)
    assert math.isclose(solution.rope_attention_factor(args[0], args[3]), want_factor, rel_tol=1e-13)


def test_yarn_ramp_is_the_papers_gamma_of_the_rotations():
    """YaRN eq. 17-18: r(d) = L / λ_d rotations of dimension d over the context; γ = 0 (interpolate) below β_slow...
    here written over the band edges the paper derives from them (eq. 22), floored and ceiled as its code does."""
    d, base, L, s = 64, 10000.0, 4096, 8.0
    inv = 1.0 / base ** (torch.arange(0, d, 2, dtype=torch.float64) / d)
    rotations = L * inv / (2 * math.pi)  # r(i) = L / λ_i
    got = solution.rope_inv_freq("yarn", d, base, s, L, None, 32.0, 1.0, torch.float64)
    assert torch.allclose(got[rotations > 32], inv[rotations > 32])  # fast: kept
    assert torch.allclose(got[rotations < 1], inv[rotations < 1] / s)  # slow: interpolated
    middle = (got / inv)[(rotations <= 32) & (rotations >= 1)]
    assert ((middle > 1 / s - 1e-12) & (middle < 1 + 1e-12)).all()


def test_dynamic_at_the_original_context_is_the_default_and_linear_is_default_over_factor():
    default = solution.rope_inv_freq("default", 32, 10000.0, dtype=torch.float64)
    assert torch.equal(solution.rope_inv_freq("dynamic", 32, 10000.0, 4.0, 2048, 2048, dtype=torch.float64), default)
    torch.testing.assert_close(solution.rope_inv_freq("linear", 32, 10000.0, 4.0, dtype=torch.float64), default / 4)
    ntk = solution.rope_inv_freq("dynamic", 32, 10000.0, 4.0, 2048, 2 * 2048, dtype=torch.float64)
    # scale = 4 · 2 − 3 = 5 and base · 5^(d/(d−2)): the lowest frequency base^(−(d−2)/d) is divided by exactly 5
    torch.testing.assert_close(ntk[-1], default[-1] / 5.0)
