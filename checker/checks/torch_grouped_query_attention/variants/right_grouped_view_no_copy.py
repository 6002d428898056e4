"""No copy of K and V: the query heads are viewed as (B, H_kv, G, T, d_k) and the kv heads broadcast
over G (what memory-conscious GQA kernels do). -1e9 and a where() for rows with no visible key."""
import math

import torch
from torch import nn


class GroupedQueryAttention(nn.Module):
    def __init__(self, d_model, num_heads, num_kv_heads, dropout=0.0):
        super().__init__()
        if d_model % num_heads != 0:
            raise ValueError(f"d_model={d_model} is not a multiple of num_heads={num_heads}")
        if num_heads % num_kv_heads != 0:
            raise ValueError(f"num_heads={num_heads} is not a multiple of num_kv_heads={num_kv_heads}")
        self.H, self.H_kv, self.d_k = num_heads, num_kv_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_v = nn.Linear(d_model, num_kv_heads * self.d_k)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, mask=None):
        B, T, D = x.shape
        H, H_kv, d_k = self.H, self.H_kv, self.d_k
        G = H // H_kv
        q = self.W_q(x).view(B, T, H_kv, G, d_k).permute(0, 2, 3, 1, 4)  # (B, H_kv, G, T, d_k): head h = g*G + i
        k = self.W_k(x).view(B, T, H_kv, d_k).permute(0, 2, 1, 3).unsqueeze(2)  # (B, H_kv, 1, T, d_k)
        v = self.W_v(x).view(B, T, H_kv, d_k).permute(0, 2, 1, 3).unsqueeze(2)
        scores = torch.einsum("bgitd,bgjsd->bgits", q, k) / math.sqrt(d_k)  # (B, H_kv, G, T, T)
        if mask is not None:
            m = mask.expand(B, H, T, T).reshape(B, H_kv, G, T, T)
            scores = scores.masked_fill(~m, -1e9)
        attn = scores.softmax(-1)
        if mask is not None:
            attn = torch.where(m, attn, torch.zeros_like(attn))
        out = self.dropout(attn) @ v  # (B, H_kv, G, T, d_k)
        out = out.permute(0, 3, 1, 2, 4).reshape(B, T, D)
        return self.W_o(out), attn.reshape(B, H, T, T)
