# expect: your drop_att acts on the attention sublayer's output
"""drop_att applied to the attention sublayer's output before the add (the Annotated Transformer's habit), not to the weights."""
import math

import torch
from torch import nn


class SimpleDecoder(nn.Module):
    def __init__(self, hidden_dim, nums_head, dropout=0.0):
        super().__init__()
        self.h, self.d_k = nums_head, hidden_dim // nums_head
        self.q_proj = nn.Linear(hidden_dim, hidden_dim)
        self.k_proj = nn.Linear(hidden_dim, hidden_dim)
        self.v_proj = nn.Linear(hidden_dim, hidden_dim)
        self.o_proj = nn.Linear(hidden_dim, hidden_dim)
        self.layernorm_att = nn.LayerNorm(hidden_dim, eps=1e-5)
        self.up_proj = nn.Linear(hidden_dim, 4 * hidden_dim)
        self.down_proj = nn.Linear(4 * hidden_dim, hidden_dim)
        self.act_fn = nn.ReLU()
        self.layernorm_ffn = nn.LayerNorm(hidden_dim, eps=1e-5)
        self.drop_att = nn.Dropout(dropout)
        self.drop_ffn = nn.Dropout(dropout)

    def self_attn(self, x, mask):
        B, T, D = x.shape
        q, k, v = (proj(x).view(B, T, self.h, self.d_k).transpose(1, 2)
                   for proj in (self.q_proj, self.k_proj, self.v_proj))
        scores = q @ k.transpose(-2, -1) / math.sqrt(self.d_k)
        p_attn = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1).masked_fill(~mask, 0.0)
        return self.o_proj((p_attn @ v).transpose(1, 2).contiguous().view(B, T, D))

    def forward(self, X, pad_mask=None):
        T = X.size(1)
        mask = torch.ones(T, T, dtype=torch.bool, device=X.device).tril()
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        # sublayer connection: norm(x + dropout(sublayer(x)))
        X = self.layernorm_att(X + self.drop_att(self.self_attn(X, mask)))
        return self.layernorm_ffn(X + self.drop_ffn(self.down_proj(self.act_fn(self.up_proj(X)))))
