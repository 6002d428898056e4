# expect: your drop_ffn acts on the FFN's hidden state
"""drop_ffn applied to the FFN's hidden state after the ReLU (nn.TransformerEncoderLayer's habit), not to its output."""
import math

import torch
import torch.nn as nn


class SimpleDecoder(nn.Module):
    def __init__(self, hidden_dim, nums_head, dropout=0.0):
        super().__init__()
        self.nums_head = nums_head
        self.head_dim = hidden_dim // nums_head
        self.q_proj = nn.Linear(hidden_dim, hidden_dim)
        self.k_proj = nn.Linear(hidden_dim, hidden_dim)
        self.v_proj = nn.Linear(hidden_dim, hidden_dim)
        self.o_proj = nn.Linear(hidden_dim, hidden_dim)
        self.drop_att = nn.Dropout(dropout)
        self.layernorm_att = nn.LayerNorm(hidden_dim, eps=1e-5)
        self.up_proj = nn.Linear(hidden_dim, hidden_dim * 4)
        self.down_proj = nn.Linear(hidden_dim * 4, hidden_dim)
        self.act_fn = nn.ReLU()
        self.drop_ffn = nn.Dropout(dropout)
        self.layernorm_ffn = nn.LayerNorm(hidden_dim, eps=1e-5)

    def attention_block(self, X, mask):
        batch, seq, _ = X.size()
        query = self.q_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        key = self.k_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        value = self.v_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        att_weight = query @ key.transpose(2, 3) / math.sqrt(self.head_dim)
        att_weight = att_weight.masked_fill(~mask, float("-inf")).softmax(dim=-1).masked_fill(~mask, 0.0)
        att_weight = self.drop_att(att_weight)
        output = (att_weight @ value).transpose(1, 2).reshape(batch, seq, -1)
        return self.layernorm_att(X + self.o_proj(output))

    def ffn_block(self, X):
        hidden = self.drop_ffn(self.act_fn(self.up_proj(X)))  # (B, T, 4D)
        return self.layernorm_ffn(X + self.down_proj(hidden))

    def forward(self, X, pad_mask=None):
        seq = X.size(1)
        mask = torch.ones(seq, seq, dtype=torch.bool, device=X.device).tril()
        if pad_mask is not None:
            mask = mask & pad_mask[:, None, None, :]
        return self.ffn_block(self.attention_block(X, mask))
