# expect: that is a (T_q, T_k) matrix
"""Ordinary attention: correct values, but the whole (B, H, T_q, T_k) score matrix exists at once."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, T_q, T_k): what flash attention avoids
    if causal:
        visible = torch.ones(T_q, T_k, dtype=torch.bool, device=q.device).tril(T_k - T_q)
        scores = scores.masked_fill(~visible, float("-inf"))
        weights = scores.softmax(-1).nan_to_num(0.0)
    else:
        weights = scores.softmax(-1)
    return weights @ v
