"""Per query, attend over the slice of keys [max(0, i - window + 1), i]: never builds a T x T mask."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    mask = torch.zeros(T, T, dtype=torch.bool, device=device)
    for i in range(T):
        mask[i, max(0, i - window + 1): i + 1] = True
    return mask


def sliding_window_attention(q, k, v, window):
    if window < 1:
        raise ValueError("window must be >= 1")
    outs = []
    for i in range(q.size(-2)):
        lo = max(0, i - window + 1)
        s = q[..., i: i + 1, :] @ k[..., lo: i + 1, :].transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, 1, w)
        outs.append(s.softmax(dim=-1) @ v[..., lo: i + 1, :])  # (B, H, 1, d_v)
    return torch.cat(outs, dim=-2)
