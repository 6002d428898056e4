# expect: h % num_kv_heads
"""LLaMA's float32 softmax, but repeat_kv written with Tensor.repeat: the kv heads are tiled
(0, 1, 2, 0, 1, 2, ...), not interleaved. The accepted float32 softmax must not hide it."""
import math

import torch
import torch.nn.functional as F
from torch import nn


def repeat_kv(x: torch.Tensor, n_rep: int) -> torch.Tensor:
    """torch.repeat_interleave(x, dim=2, repeats=n_rep)"""
    bs, slen, n_kv_heads, head_dim = x.shape
    if n_rep == 1:
        return x
    return x.repeat(1, 1, n_rep, 1)


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads or num_heads % num_kv_heads:
            raise ValueError("num_heads must divide d_model and num_kv_heads must divide num_heads")
        self.n_local_heads = num_heads
        self.n_local_kv_heads = num_kv_heads
        self.n_rep = self.n_local_heads // self.n_local_kv_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, num_heads * self.head_dim)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.head_dim)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.head_dim)
        self.W_o = nn.Linear(num_heads * self.head_dim, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        bsz, seqlen, _ = x.shape
        xq, xk, xv = self.W_q(x), self.W_k(x), self.W_v(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim)
        xk = xk.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)
        xv = xv.view(bsz, seqlen, self.n_local_kv_heads, self.head_dim)

        # repeat k/v heads if n_kv_heads < n_heads
        keys = repeat_kv(xk, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)
        values = repeat_kv(xv, self.n_rep)  # (bs, seqlen, n_local_heads, head_dim)

        xq = xq.transpose(1, 2)  # (bs, n_local_heads, seqlen, head_dim)
        keys = keys.transpose(1, 2)
        values = values.transpose(1, 2)
        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + torch.zeros_like(scores).masked_fill(~mask, float("-inf"))
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(self.dropout(scores), values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.W_o(output), scores
