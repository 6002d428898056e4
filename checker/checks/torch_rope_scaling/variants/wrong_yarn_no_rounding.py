# expect: floor
"""YaRN's band edges left unrounded (no floor and ceil): the ramp starts and ends between dimensions. Hugging Face
rounds them (truncate=True, the default); only gpt-oss's configuration asks for truncate=False."""
import math

import torch


def rope_inv_freq(rope_type, head_dim, base, factor=1.0, original_max_position_embeddings=2048, seq_len=None,
                  beta_fast=32.0, beta_slow=1.0, dtype=torch.float32):
    if rope_type not in ("default", "linear", "dynamic", "yarn"):
        raise ValueError(f"unknown rope_type {rope_type}")
    d, L = head_dim, original_max_position_embeddings
    if rope_type == "dynamic":
        S = max(seq_len or L, L)
        base = base * (factor * S / L - (factor - 1)) ** (d / (d - 2))
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype) / d)
    if rope_type == "linear":
        return inv_freq / factor
    if rope_type == "yarn":
        low = max((d * math.log(L / (beta_fast * 2 * math.pi)) / (2 * math.log(base))), 0)
        high = min((d * math.log(L / (beta_slow * 2 * math.pi)) / (2 * math.log(base))), d - 1)
        ramp = ((torch.arange(d // 2, dtype=dtype) - low) / max(high - low, 0.001)).clamp(0, 1)
        return (inv_freq / factor) * ramp + inv_freq * (1 - ramp)
    return inv_freq


def rope_attention_factor(rope_type, factor=1.0):
    if rope_type not in ("default", "linear", "dynamic", "yarn"):
        raise ValueError(f"unknown rope_type {rope_type}")
    return 0.1 * math.log(factor) + 1.0 if rope_type == "yarn" else 1.0
