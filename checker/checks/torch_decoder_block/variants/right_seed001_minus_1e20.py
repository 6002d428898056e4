# followup: uniform average over every key
"""Seed 001 ported as is: a 0/1 mask, .tril(), masked_fill(mask == 0, -1e20) and nothing more.

Correct wherever a query sees at least one key; a query that sees none (a PAD at position 0)
gets a uniform average over every key, the future included.
"""
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

    def attention_output(self, query, key, value, attention_mask=None):
        key = key.transpose(2, 3)
        att_weight = torch.matmul(query, key) / math.sqrt(self.head_dim)
        if attention_mask is not None:
            attention_mask = attention_mask.tril()
            att_weight = att_weight.masked_fill(attention_mask == 0, float("-1e20"))
        else:
            attention_mask = torch.ones_like(att_weight).tril()
            att_weight = att_weight.masked_fill(attention_mask == 0, float("-1e20"))
        att_weight = torch.softmax(att_weight, dim=-1)
        att_weight = self.drop_att(att_weight)
        mid_output = torch.matmul(att_weight, value)
        mid_output = mid_output.transpose(1, 2).contiguous()
        batch, seq, _, _ = mid_output.size()
        mid_output = mid_output.view(batch, seq, -1)
        return self.o_proj(mid_output)

    def attention_block(self, X, attention_mask=None):
        batch, seq, _ = X.size()
        query = self.q_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        key = self.k_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        value = self.v_proj(X).view(batch, seq, self.nums_head, -1).transpose(1, 2)
        output = self.attention_output(query, key, value, attention_mask=attention_mask)
        return self.layernorm_att(X + output)

    def ffn_block(self, X):
        up = self.act_fn(self.up_proj(X))
        down = self.drop_ffn(self.down_proj(up))
        return self.layernorm_ffn(X + down)

    def forward(self, X, pad_mask=None):
        batch, seq, _ = X.size()
        mask = None
        if pad_mask is not None:
            # (B, T) -> (B, 1, 1, T) -> (B, H, T, T), as in seed 001's test
            mask = pad_mask.long().unsqueeze(1).unsqueeze(2).repeat(1, self.nums_head, seq, 1)
        return self.ffn_block(self.attention_block(X, attention_mask=mask))
