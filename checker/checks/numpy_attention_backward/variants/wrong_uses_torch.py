# expect: off limits
"""Lets torch autograd do the work."""
import torch
import torch.nn.functional as F


def attention_backward(dout, q, k, v, mask=None):
    tq, tk, tv = (torch.from_numpy(a).requires_grad_(True) for a in (q, k, v))
    out = F.scaled_dot_product_attention(tq, tk, tv, attn_mask=None if mask is None else torch.from_numpy(mask))
    (out * torch.from_numpy(dout)).sum().backward()
    return tq.grad.numpy(), tk.grad.numpy(), tv.grad.numpy()
