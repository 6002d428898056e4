# expect: the reference raises your error too with one change, two arguments swapped
"""Cross-attention with its query and key arguments the other way round: the memory asks, the decoder answers.
The masks no longer fit the scores, and the error model names the swap from the error alone."""

import math

import torch
from torch import Tensor, nn

# ============================================================================ given building blocks


class MultiHeadAttention(nn.Module):
    """Concat(head_1..head_H) W_o with head_h = softmax(Q_h K_hᵀ / √d_k) V_h; returns (out, attn)."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)

    def _combine_heads(self, x: Tensor) -> Tensor:
        B, H, T, d_k = x.shape
        return x.transpose(1, 2).reshape(B, T, H * d_k)  # (B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)

    def _attention(self, Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # hidden keys: -inf, so weight 0
        weights = scores.softmax(dim=-1)  # over the keys
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # a row with no visible key: NaN -> 0
        return self.dropout(weights) @ V, weights  # (B, H, T_q, T_k) x (B, H, T_k, d_k) -> (B, H, T_q, d_k)

    def forward(self, x_q: Tensor, x_kv: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        # 1) project: queries from x_q, keys and values from x_kv; then split into heads
        Q = self._split_heads(self.W_q(x_q))  # (B, T_q, D) -> (B, H, T_q, d_k)
        K = self._split_heads(self.W_k(x_kv))  # (B, T_k, D) -> (B, H, T_k, d_k)
        V = self._split_heads(self.W_v(x_kv))  # (B, T_k, D) -> (B, H, T_k, d_k)
        # 2) attend in every head at once
        out, attn = self._attention(Q, K, V, mask)  # (B, H, T_q, d_k), (B, H, T_q, T_k)
        # 3) concatenate the heads and project back to d_model
        out = self.W_o(self._combine_heads(out))  # (B, H, T_q, d_k) -> (B, T_q, D)
        return out, attn


ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}  # nn.GELU() is the exact erf form


class FeedForward(nn.Module):
    """Expands each position to d_ff, applies the activation, projects back to d_model."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.fc1 = nn.Linear(d_model, d_ff)  # weight (d_ff, D)
        self.fc2 = nn.Linear(d_ff, d_model)  # weight (D, d_ff)
        self.act = ACTIVATIONS[activation]()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.act(self.fc1(x))  # (..., D) @ (D, d_ff) -> (..., d_ff)
        return self.fc2(self.dropout(hidden))  # (..., d_ff) @ (d_ff, D) -> (..., D)


# ============================================================================ the kata


class DecoderLayer(nn.Module):
    """Post-LN decoder layer (seed 003): returns (y, self-attention weights, cross-attention weights)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        # 1) masked self-attention: Q = K = V = y, position i sees only the target keys tgt_mask allows
        sa_out, self_weights = self.self_attn(y, y, tgt_mask)  # (B, T_t, D), (B, H, T_t, T_t)
        y = self.norm1(y + self.dropout(sa_out))  # residual from the sublayer's input, then LN
        # 2) cross-attention over the encoder memory
        ca_out, cross_weights = self.cross_attn(memory, y, memory_mask)  # (B, T_t, D), (B, H, T_t, T_s)
        y = self.norm2(y + self.dropout(ca_out))
        # 3) position-wise feed-forward network
        y = self.norm3(y + self.dropout(self.ffn(y)))  # (B, T_t, D)
        return y, self_weights, cross_weights
