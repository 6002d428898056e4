# followup: float32 arithmetic inside was recognised
"""transformers' modeling_rope_utils (the version of huggingface/transformers at 0044e3b, v4.44):
_compute_default_rope_parameters, _compute_linear_scaling_rope_parameters, _compute_dynamic_ntk_parameters and
_compute_yarn_parameters with its find_correction_dim, find_correction_range and linear_ramp_factor. Adapted: the
config's fields passed as arguments (dim = head_dim, max_position_embeddings = original_max_position_embeddings),
the float32 result cast to the dtype asked for at the end."""
import math

import torch


def _default(base, dim):
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, 1.0


def _linear(base, dim, factor):
    inv_freq, attention_factor = _default(base, dim)
    inv_freq /= factor
    return inv_freq, attention_factor


def _dynamic(base, dim, max_position_embeddings, factor, seq_len):
    attention_factor = 1.0
    seq_len = seq_len if seq_len is not None and seq_len > max_position_embeddings else max_position_embeddings
    base = base * ((factor * seq_len / max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    inv_freq = 1.0 / (base ** (torch.arange(0, dim, 2, dtype=torch.int64).float() / dim))
    return inv_freq, attention_factor


def _yarn(base, dim, max_position_embeddings, factor, beta_fast=None, beta_slow=None, attention_factor=None):
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
        linear_func = (torch.arange(dim, dtype=torch.float32) - min) / (max - min)
        ramp_func = torch.clamp(linear_func, 0, 1)
        return ramp_func

    pos_freqs = base ** (torch.arange(0, dim, 2).float() / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    low, high = find_correction_range(beta_fast, beta_slow, dim, base, max_position_embeddings)
    inv_freq_extrapolation_factor = 1 - linear_ramp_factor(low, high, dim // 2).float()
    inv_freq = (
        inv_freq_interpolation * (1 - inv_freq_extrapolation_factor)
        + inv_freq_extrapolation * inv_freq_extrapolation_factor
    )
    return inv_freq, attention_factor


ROPE_INIT_FUNCTIONS = {"default": _default, "linear": _linear, "dynamic": _dynamic, "yarn": _yarn}


def _compute(rope_type, head_dim, base, factor, original_max_position_embeddings, seq_len, beta_fast, beta_slow):
    if rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"Unrecognized rope_type {rope_type}")
    if rope_type == "default":
        return _default(base, head_dim)
    if rope_type == "linear":
        return _linear(base, head_dim, factor)
    if rope_type == "dynamic":
        return _dynamic(base, head_dim, original_max_position_embeddings, factor, seq_len)
    return _yarn(base, head_dim, original_max_position_embeddings, factor, beta_fast, beta_slow)


def rope_inv_freq(rope_type, head_dim, base, factor=1.0, original_max_position_embeddings=2048, seq_len=None,
                  beta_fast=32.0, beta_slow=1.0, dtype=torch.float32):
    inv_freq, _ = _compute(rope_type, head_dim, base, factor, original_max_position_embeddings, seq_len, beta_fast,
                           beta_slow)
    return inv_freq.to(dtype)


def rope_attention_factor(rope_type, factor=1.0):
    if rope_type not in ROPE_INIT_FUNCTIONS:
        raise ValueError(f"Unrecognized rope_type {rope_type}")
    return 0.1 * math.log(factor) + 1.0 if rope_type == "yarn" else 1.0
