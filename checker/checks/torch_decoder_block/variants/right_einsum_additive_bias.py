"""einsum, an additive bias (0 visible / -inf hidden) built with triu(1), torch.where for rows that
see nothing, and F.layer_norm with the modules' own weights."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class SimpleDecoder(nn.Module):
    def __init__(self, hidden_dim, nums_head, dropout=0.0):
        super().__init__()
        self.h, self.dk = nums_head, hidden_dim // nums_head
        for name in ("q_proj", "k_proj", "v_proj", "o_proj"):
            setattr(self, name, nn.Linear(hidden_dim, hidden_dim))
        self.layernorm_att = nn.LayerNorm(hidden_dim)
        self.up_proj = nn.Linear(hidden_dim, 4 * hidden_dim)
        self.down_proj = nn.Linear(4 * hidden_dim, hidden_dim)
        self.act_fn = nn.ReLU()
        self.layernorm_ffn = nn.LayerNorm(hidden_dim)
        self.drop_att = nn.Dropout(dropout)
        self.drop_ffn = nn.Dropout(dropout)

    def _ln(self, norm, x):
        return F.layer_norm(x, norm.normalized_shape, norm.weight, norm.bias, norm.eps)

    def forward(self, X, pad_mask=None):
        B, T, D = X.shape
        future = torch.triu(torch.ones(T, T, dtype=torch.bool, device=X.device), diagonal=1)  # True = future
        hidden = future.expand(B, T, T)
        if pad_mask is not None:
            hidden = hidden | ~pad_mask[:, None, :]  # (B, T_q, T_k)
        bias = torch.zeros(B, T, T, dtype=X.dtype, device=X.device).masked_fill(hidden, float("-inf"))
        q = self.q_proj(X).reshape(B, T, self.h, self.dk)
        k = self.k_proj(X).reshape(B, T, self.h, self.dk)
        v = self.v_proj(X).reshape(B, T, self.h, self.dk)
        scores = torch.einsum("bqhd,bkhd->bhqk", q, k) / math.sqrt(self.dk) + bias[:, None]
        empty = hidden.all(dim=-1)[:, None, :, None]  # (B, 1, T, 1): the query sees nothing
        w = torch.where(empty, torch.zeros_like(scores), scores.softmax(-1).nan_to_num(0.0))
        ctx = torch.einsum("bhqk,bkhd->bqhd", self.drop_att(w), v).reshape(B, T, D)
        h1 = self._ln(self.layernorm_att, X + self.o_proj(ctx))
        ff = self.down_proj(self.act_fn(self.up_proj(h1)))
        return self._ln(self.layernorm_ffn, h1 + self.drop_ffn(ff))
