"""RoPE scaling: the inverse frequencies and the attention factor of Hugging Face's rope_scaling types (reference).

Shape legend:
    d    head_dim, the rotated size per head (even)
    d/2  one inverse frequency per pair of rotated dimensions

As transformers' modeling_rope_utils: _compute_default_rope_parameters, _compute_linear_scaling_rope_parameters
(positions / factor, i.e. inv_freq / factor), _compute_dynamic_ntk_parameters (the base raised for the current
seq_len) and _compute_yarn_parameters (a ramp between the interpolated and the original frequencies, and the
attention factor 0.1 · ln(factor) + 1), computed in the given dtype.
"""

import math

import torch
from torch import Tensor

ROPE_TYPES = ("default", "linear", "dynamic", "yarn")


def correction_dim(num_rotations: float, head_dim: int, base: float, original_max_position_embeddings: int) -> float:
    """YaRN: the (fractional) dimension index whose wavelength turns num_rotations times over the original context."""
    return head_dim * math.log(original_max_position_embeddings / (num_rotations * 2 * math.pi)) / (2 * math.log(base))


def rope_inv_freq(rope_type: str, head_dim: int, base: float, factor: float = 1.0,
                  original_max_position_embeddings: int = 2048, seq_len: int | None = None,
                  beta_fast: float = 32.0, beta_slow: float = 1.0, dtype: torch.dtype = torch.float32) -> Tensor:
    """The (d/2,) inverse frequencies θ_i of the rope_type's scaling."""
    if rope_type not in ROPE_TYPES:
        raise ValueError(f"unknown rope_type {rope_type!r}: one of {ROPE_TYPES}")
    exponents = 2 * torch.arange(head_dim // 2, dtype=dtype) / head_dim  # (d/2,): 2i / d
    if rope_type == "dynamic":
        # 1) dynamic NTK: the base grows with the current length, once it passes the original context
        length = original_max_position_embeddings if seq_len is None else max(seq_len, original_max_position_embeddings)
        scale = factor * length / original_max_position_embeddings - (factor - 1)  # 1 at the original context
        base = base * scale ** (head_dim / (head_dim - 2))
    # 2) RoPE's inverse frequencies, base^(-2i/d)
    inv_freq = 1.0 / base ** exponents  # (d/2,)
    if rope_type == "linear":
        # 3) linear: positions / factor, the same as every frequency / factor
        inv_freq = inv_freq / factor
    if rope_type == "yarn":
        # 4) YaRN: keep the frequencies that turn beta_fast times or more over the context, interpolate those under beta_slow
        low = max(math.floor(correction_dim(beta_fast, head_dim, base, original_max_position_embeddings)), 0)
        high = min(math.ceil(correction_dim(beta_slow, head_dim, base, original_max_position_embeddings)), head_dim - 1)
        span = high - low if high != low else 0.001  # both edges clamped to one dimension: a step, not 0 / 0
        ramp = ((torch.arange(head_dim // 2, dtype=dtype) - low) / span).clamp(0, 1)  # (d/2,)
        extrapolation = 1 - ramp  # (d/2,): 1 where the original frequency is kept, 0 where it is divided by factor
        inv_freq = inv_freq / factor * (1 - extrapolation) + inv_freq * extrapolation
    return inv_freq


def rope_attention_factor(rope_type: str, factor: float = 1.0) -> float:
    """The scale of cos and sin: YaRN's attention temperature 0.1 · ln(factor) + 1, else 1."""
    if rope_type not in ROPE_TYPES:
        raise ValueError(f"unknown rope_type {rope_type!r}: one of {ROPE_TYPES}")
    if rope_type == "yarn":
        # 1) YaRN: cos and sin (so q·k) scaled up as the context is stretched
        return 0.1 * math.log(factor) + 1.0
    return 1.0
