# expect: uses torch.nn.functional.scaled_dot_product_attention
"""The right mask handed to the built-in: off limits in this kata."""
import torch
import torch.nn.functional as F


def sliding_window_mask(T, window, device=None):
    if window < 1:
        raise ValueError("window must be >= 1")
    pos = torch.arange(T, device=device)
    d = pos[:, None] - pos[None, :]
    return (d >= 0) & (d < window)


def sliding_window_attention(q, k, v, window):
    return F.scaled_dot_product_attention(q, k, v, attn_mask=sliding_window_mask(q.size(-2), window, q.device))
