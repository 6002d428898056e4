"""Seed 001's code with -1e20 and 0/1 masks, plus the one fix it needs: a query that sees no key
gets zero weights (its row of the 0/1 mask is all zero)."""
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
        self.layernorm_att = nn.LayerNorm(hidden_dim, eps=0.00001)
        self.up_proj = nn.Linear(hidden_dim, hidden_dim * 4)
        self.down_proj = nn.Linear(hidden_dim * 4, hidden_dim)
        self.act_fn = nn.ReLU()
        self.drop_ffn = nn.Dropout(dropout)
        self.layernorm_ffn = nn.LayerNorm(hidden_dim, eps=0.00001)

    def attention_output(self, query, key, value, attention_mask):
        key = key.transpose(2, 3)
        att_weight = torch.matmul(query, key) / math.sqrt(self.head_dim)
        attention_mask = attention_mask.tril()  # causal, always
        att_weight = att_weight.masked_fill(attention_mask == 0, float("-1e20"))
        att_weight = torch.softmax(att_weight, dim=-1)
        sees_something = attention_mask.sum(dim=-1, keepdim=True) > 0  # (B, H, T, 1)
        att_weight = att_weight * sees_something  # a row with no visible key: zero weights
        att_weight = self.drop_att(att_weight)
        mid_output = torch.matmul(att_weight, value)
        mid_output = mid_output.transpose(1, 2).contiguous()
        batch, seq, _, _ = mid_output.size()
        return self.o_proj(mid_output.view(batch, seq, -1))

    def attention_block(self, X, attention_mask):
        batch, seq, _ = X.size()
        query = self.q_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        key = self.k_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        value = self.v_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        output = self.attention_output(query, key, value, attention_mask)
        return self.layernorm_att(X + output)

    def ffn_block(self, X):
        up = self.act_fn(self.up_proj(X))
        down = self.drop_ffn(self.down_proj(up))
        return self.layernorm_ffn(X + down)

    def forward(self, X, pad_mask=None):
        batch, seq, _ = X.size()
        if pad_mask is None:
            pad_mask = torch.ones(batch, seq, dtype=torch.long, device=X.device)
        mask = pad_mask.long().unsqueeze(1).unsqueeze(2).repeat(1, self.nums_head, seq, 1)  # (B, H, T, T)
        return self.ffn_block(self.attention_block(X, mask))
