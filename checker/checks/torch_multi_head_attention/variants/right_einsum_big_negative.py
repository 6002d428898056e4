"""einsum and permute instead of view/transpose, -1e9 instead of -inf, and 0/1 arithmetic for hidden keys."""
import torch
from torch import nn


class MultiHeadAttention(nn.Module):
    def __init__(self, d_model, num_heads, dropout=0.0):
        super().__init__()
        self.h = num_heads
        self.W_q, self.W_k, self.W_v, self.W_o = (nn.Linear(d_model, d_model) for _ in range(4))
        self.drop = nn.Dropout(dropout)

    def forward(self, x_q, x_kv, mask=None):
        B, T_q, D = x_q.shape
        q = self.W_q(x_q).reshape(B, T_q, self.h, -1)          # (B, T_q, H, d_k)
        k = self.W_k(x_kv).reshape(B, x_kv.shape[1], self.h, -1)
        v = self.W_v(x_kv).reshape(B, x_kv.shape[1], self.h, -1)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) * q.shape[-1] ** -0.5
        if mask is not None:
            keep = mask.to(scores.dtype)
            scores = scores * keep + (1.0 - keep) * -1e9
        w = torch.softmax(scores, dim=-1)
        if mask is not None:
            w = w * keep
        out = torch.einsum("bhqk,bkhd->bqhd", self.drop(w), v).reshape(B, T_q, D)
        return self.W_o(out), w
