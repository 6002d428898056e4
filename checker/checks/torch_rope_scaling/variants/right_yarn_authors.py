"""YaRN's authors' code (jquesnelle/yarn, scaled_rope/LlamaYaRNScaledRotaryEmbedding.py): _yarn_find_correction_range,
_yarn_linear_ramp_mask, inv_freq_mask = (1 - ramp) * extrapolation_factor, and get_mscale(scale) = 0.1 ln(scale) + 1
for the cos and sin. Adapted: computed in the dtype asked for; linear and dynamic NTK written beside it as the
authors' repository writes them (LlamaLinearScaledRotaryEmbedding divides the positions by the scale, the same as
the frequencies; LlamaDynamicScaledRotaryEmbedding raises the base once seq_len passes the original context)."""
import math

import torch


def _yarn_find_correction_dim(num_rotations, dim, base=10000, max_position_embeddings=2048):
    return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_find_correction_range(low_rot, high_rot, dim, base=10000, max_position_embeddings=2048):
    low = math.floor(_yarn_find_correction_dim(low_rot, dim, base, max_position_embeddings))
    high = math.ceil(_yarn_find_correction_dim(high_rot, dim, base, max_position_embeddings))
    return max(low, 0), min(high, dim - 1)


def _yarn_linear_ramp_mask(min, max, dim, dtype):
    if min == max:
        max += 0.001
    linear_func = (torch.arange(dim, dtype=dtype) - min) / (max - min)
    return torch.clamp(linear_func, 0, 1)


def _yarn_get_mscale(scale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * math.log(scale) + 1.0


def rope_inv_freq(rope_type, head_dim, base, factor=1.0, original_max_position_embeddings=2048, seq_len=None,
                  beta_fast=32.0, beta_slow=1.0, dtype=torch.float32):
    dim = head_dim
    if rope_type not in ("default", "linear", "dynamic", "yarn"):
        raise ValueError(rope_type)
    if rope_type == "dynamic" and seq_len is not None and seq_len > original_max_position_embeddings:
        base = base * ((factor * seq_len / original_max_position_embeddings) - (factor - 1)) ** (dim / (dim - 2))
    pos_freqs = base ** (torch.arange(0, dim, 2, dtype=dtype) / dim)
    inv_freq_extrapolation = 1.0 / pos_freqs
    if rope_type in ("default", "dynamic"):
        return inv_freq_extrapolation
    inv_freq_interpolation = 1.0 / (factor * pos_freqs)
    if rope_type == "linear":
        return inv_freq_interpolation
    low, high = _yarn_find_correction_range(beta_fast, beta_slow, dim, base, original_max_position_embeddings)
    extrapolation_factor = 1
    inv_freq_mask = (1 - _yarn_linear_ramp_mask(low, high, dim // 2, dtype)) * extrapolation_factor
    return inv_freq_interpolation * (1 - inv_freq_mask) + inv_freq_extrapolation * inv_freq_mask


def rope_attention_factor(rope_type, factor=1.0):
    if rope_type not in ("default", "linear", "dynamic", "yarn"):
        raise ValueError(rope_type)
    return _yarn_get_mscale(factor) if rope_type == "yarn" else 1.0
