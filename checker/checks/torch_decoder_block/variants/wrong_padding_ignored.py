# expect: a branch taken always, or never (training, eval, a flag)
"""pad_mask is accepted and never used: only the causal mask."""

import math

import torch
from torch import Tensor, nn


class SimpleDecoder(nn.Module):
    """Masked multi-head self-attention, then a 4x ReLU FFN; each with residual and post-norm."""

    def __init__(self, hidden_dim: int, nums_head: int, dropout: float = 0.0):
        super().__init__()
        assert hidden_dim % nums_head == 0, "nums_head must divide hidden_dim"
        self.nums_head, self.head_dim = nums_head, hidden_dim // nums_head
        # attention sublayer
        self.q_proj = nn.Linear(hidden_dim, hidden_dim)
        self.k_proj = nn.Linear(hidden_dim, hidden_dim)
        self.v_proj = nn.Linear(hidden_dim, hidden_dim)
        self.o_proj = nn.Linear(hidden_dim, hidden_dim)
        self.drop_att = nn.Dropout(dropout)
        self.layernorm_att = nn.LayerNorm(hidden_dim, eps=1e-5)
        # feed-forward sublayer: up 4x, ReLU, down
        self.up_proj = nn.Linear(hidden_dim, 4 * hidden_dim)
        self.down_proj = nn.Linear(4 * hidden_dim, hidden_dim)
        self.act_fn = nn.ReLU()
        self.drop_ffn = nn.Dropout(dropout)
        self.layernorm_ffn = nn.LayerNorm(hidden_dim, eps=1e-5)

    def attention_block(self, X: Tensor, mask: Tensor) -> Tensor:
        """X (B, T, D), mask broadcastable to (B, H, T, T) -> layernorm_att(X + attention(X))"""
        B, T, _ = X.shape
        # 1) project and split into heads: (B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)
        Q = self.q_proj(X).view(B, T, self.nums_head, self.head_dim).transpose(1, 2)
        K = self.k_proj(X).view(B, T, self.nums_head, self.head_dim).transpose(1, 2)
        V = self.v_proj(X).view(B, T, self.nums_head, self.head_dim).transpose(1, 2)
        # 2) scaled scores; hidden keys get -inf, and rows that see nothing get zero weights
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.head_dim)  # (B, H, T, d_k) x (B, H, d_k, T) -> (B, H, T, T)
        weights = scores.masked_fill(~mask, float("-inf")).softmax(dim=-1).masked_fill(~mask, 0.0)
        out = self.drop_att(weights) @ V  # (B, H, T, T) x (B, H, T, d_k) -> (B, H, T, d_k)
        # 3) combine the heads and project: (B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)
        out = self.o_proj(out.transpose(1, 2).reshape(B, T, -1))
        return self.layernorm_att(X + out)  # post-norm

    def ffn_block(self, X: Tensor) -> Tensor:
        """X (B, T, D) -> layernorm_ffn(X + down(relu(up(X))))"""
        down = self.down_proj(self.act_fn(self.up_proj(X)))  # (B, T, D) -> (B, T, 4D) -> (B, T, D)
        return self.layernorm_ffn(X + self.drop_ffn(down))  # post-norm

    def forward(self, X: Tensor, pad_mask: Tensor | None = None) -> Tensor:
        T = X.size(1)
        # 1) the causal mask, always; with padding, AND the real-token keys
        mask = torch.ones(T, T, dtype=torch.bool, device=X.device).tril()  # (T, T): query i sees keys 0..i
        # 2) attention sublayer, then feed-forward sublayer
        return self.ffn_block(self.attention_block(X, mask))
