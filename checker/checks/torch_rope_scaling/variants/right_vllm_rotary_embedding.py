"""vLLM's rotary embeddings (vllm/model_executor/layers/rotary_embedding.py): RotaryEmbedding._compute_inv_freq,
LinearScalingRotaryEmbedding (the frequencies over the scaling factor), DynamicNTKScalingRotaryEmbedding and
YaRNScalingRotaryEmbedding._compute_inv_freq with _yarn_find_correction_range, _yarn_linear_ramp_mask and
yarn_get_mscale. Adapted: vLLM's dynamic NTK fixes the length at max_position · factor when it builds its cache, here
the current seq_len is used, as Hugging Face's rope_scaling does; one function per quantity."""
import math

import torch


def _compute_inv_freq(base, rotary_dim, dtype):
    return 1.0 / (base ** (torch.arange(0, rotary_dim, 2, dtype=dtype) / rotary_dim))


def _yarn_find_correction_dim(num_rotations, dim, base=10000, max_position_embeddings=2048):
    return (dim * math.log(max_position_embeddings / (num_rotations * 2 * math.pi))) / (2 * math.log(base))


def _yarn_find_correction_range(low_rot, high_rot, dim, base=10000, max_position_embeddings=2048):
    low = math.floor(_yarn_find_correction_dim(low_rot, dim, base, max_position_embeddings))
    high = math.ceil(_yarn_find_correction_dim(high_rot, dim, base, max_position_embeddings))
    return max(low, 0), min(high, dim - 1)


def _yarn_linear_ramp_mask(low, high, dim, dtype):
    if low == high:
        high += 0.001
    linear_func = (torch.arange(dim, dtype=dtype) - low) / (high - low)
    return torch.clamp(linear_func, 0, 1)


def yarn_get_mscale(scale=1):
    if scale <= 1:
        return 1.0
    return 0.1 * math.log(scale) + 1.0


def rope_inv_freq(rope_type, head_dim, base, factor=1.0, original_max_position_embeddings=2048, seq_len=None,
                  beta_fast=32.0, beta_slow=1.0, dtype=torch.float32):
    rotary_dim, max_position = head_dim, original_max_position_embeddings
    if rope_type == "default":
        return _compute_inv_freq(base, rotary_dim, dtype)
    if rope_type == "linear":
        return _compute_inv_freq(base, rotary_dim, dtype) / factor
    if rope_type == "dynamic":
        max_len = max(seq_len or max_position, max_position)
        base = base * ((factor * max_len / max_position) - (factor - 1)) ** (rotary_dim / (rotary_dim - 2))
        return _compute_inv_freq(base, rotary_dim, dtype)
    if rope_type == "yarn":
        pos_freqs = base ** (torch.arange(0, rotary_dim, 2, dtype=dtype) / rotary_dim)
        inv_freq_extrapolation = 1.0 / pos_freqs
        inv_freq_interpolation = 1.0 / (factor * pos_freqs)
        low, high = _yarn_find_correction_range(beta_fast, beta_slow, rotary_dim, base, max_position)
        inv_freq_mask = (1 - _yarn_linear_ramp_mask(low, high, rotary_dim // 2, dtype)) * 1.0
        return inv_freq_interpolation * (1 - inv_freq_mask) + inv_freq_extrapolation * inv_freq_mask
    raise ValueError(f"Unknown RoPE scaling type {rope_type}")


def rope_attention_factor(rope_type, factor=1.0):
    if rope_type not in ("default", "linear", "dynamic", "yarn"):
        raise ValueError(f"Unknown RoPE scaling type {rope_type}")
    return float(yarn_get_mscale(factor)) if rope_type == "yarn" else 1.0
