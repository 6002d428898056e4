# expect: the 1 = masked convention of the NumPy tutorial
"""Returns the positions to HIDE (seed 000's convention) and adds -1e9 where the mask is 1."""
import math

import torch


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    pos = torch.arange(T, device=device)
    d = pos[:, None] - pos[None, :]
    return (d < 0) | (d >= window)


def sliding_window_attention(q, k, v, window):
    scores = q @ k.transpose(-2, -1) / math.sqrt(q.size(-1))
    scores = scores + sliding_window_mask(q.size(-2), window, q.device) * -1e9
    return torch.softmax(scores, dim=-1) @ v
