"""RoPE scaling: the inverse frequencies of Hugging Face's rope_scaling types, and YaRN's attention factor.

Shape legend:
    d    head_dim: the rotated size per head (even)
    d/2  one inverse frequency per pair of rotated dimensions, i = 0 .. d/2 - 1
    L    original_max_position_embeddings: the context the model was pretrained on

RoPE rotates the pair (2i, 2i+1) of q and k at position m by the angle m · θ_i, with θ_i = base^(-2i/d). A model
pretrained on L positions has never seen angles beyond L · θ_i; to run it on longer inputs, Hugging Face's
`rope_scaling` configuration changes the θ_i (transformers' modeling_rope_utils):

    "default"  θ_i = base^(-2i/d)
    "linear"   θ_i = base^(-2i/d) / factor            position interpolation (Chen et al. 2023): positions / factor
    "dynamic"  θ_i = base'^(-2i/d), with base' = base · (factor · S / L - (factor - 1))^(d / (d - 2)),
               S = max(seq_len, L) (seq_len None counts as L): dynamic NTK, the base raised only once the
               current length S passes L (at S = L, base' = base)
    "yarn"     θ_i = (1 - r_i) · base^(-2i/d) + r_i · base^(-2i/d) / factor      YaRN (Peng et al. 2023), where
               low  = floor(d · ln(L / (beta_fast · 2π)) / (2 ln base)),  clamped to >= 0
               high = ceil(d · ln(L / (beta_slow · 2π)) / (2 ln base)),   clamped to <= d - 1
               r_i  = clamp((i - low) / (high - low), 0, 1)   (high - low = 0 counts as 0.001)
               the dimensions that turn more than beta_fast times over L keep their θ_i (r = 0), those that
               turn fewer than beta_slow times are interpolated (r = 1), a linear ramp in between.

and YaRN scales cos and sin by the attention factor 0.1 · ln(factor) + 1 (every other type: 1.0).

1. rope_inv_freq(rope_type, head_dim, base, factor=1.0, original_max_position_embeddings=2048, seq_len=None,
                 beta_fast=32.0, beta_slow=1.0, dtype=torch.float32) -> inv_freq (d/2,) of dtype
   computed in dtype (Hugging Face computes in float32). factor is ignored by "default"; seq_len is read by
   "dynamic" only; beta_fast and beta_slow by "yarn" only.
2. rope_attention_factor(rope_type, factor=1.0) -> float

Arguments:
    rope_type   "default", "linear", "dynamic" or "yarn"; any other raises ValueError (in both functions)
    head_dim    int d, even
    base        float, rope_theta (10000.0 for LLaMA)
    factor      float >= 1, the context extension
    original_max_position_embeddings   int L
    seq_len     int or None, the current sequence length (dynamic)
    beta_fast, beta_slow   floats, YaRN's band edges in rotations (32 and 1, the paper's)
    dtype       torch.float32 or torch.float64
Off limits: transformers.
"""

import torch
from torch import Tensor


def rope_inv_freq(rope_type: str, head_dim: int, base: float, factor: float = 1.0,
                  original_max_position_embeddings: int = 2048, seq_len: int | None = None,
                  beta_fast: float = 32.0, beta_slow: float = 1.0, dtype: torch.dtype = torch.float32) -> Tensor:
    raise NotImplementedError("write rope_inv_freq: base^(-2i/d), then the rope_type's change")


def rope_attention_factor(rope_type: str, factor: float = 1.0) -> float:
    raise NotImplementedError("write rope_attention_factor: 0.1 * ln(factor) + 1 for yarn, else 1.0")
