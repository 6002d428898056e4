"""Encoder layer: self-attention and FFN, each with a residual connection and post-LN.

Shape legend:
    B     batch size
    T     source length
    D     d_model
    H     num_heads
    d_k   D // H, the size of one head
    d_ff  hidden size of the FFN

Implement EncoderLayer, the interview tutorial's encoder layer (post-LN, the paper's order):

    sa_out, attn = self_attn(x, x, src_mask)
    x = norm1(x + dropout(sa_out))
    x = norm2(x + dropout(ffn(x)))
    return x, attn

__init__(d_model, num_heads, d_ff, dropout=0.0) must create, with these names (the checker loads
its weights into them):
    self_attn  MultiHeadAttention(d_model, num_heads, dropout)   GIVEN below
    ffn        FeedForward(d_model, d_ff, dropout)                GIVEN below (ReLU)
    norm1      nn.LayerNorm(d_model), after the attention sublayer
    norm2      nn.LayerNorm(d_model), after the FFN sublayer (a separate module from norm1)
    dropout    nn.Dropout(dropout), on each sublayer's output before the add (the checker uses 0.0)

forward(x, src_mask=None) arguments:
    x         (B, T, D) float tensor
    src_mask  None, or a bool tensor broadcastable to (B, H, T, T), usually the padding mask
              (B, 1, 1, T) from make_pad_mask. True = this query may attend to this key
              (a real token); False = hidden (PAD). Hand it to self_attn unchanged.
Returns (x, attn):
    x     (B, T, D), same dtype as the input
    attn  (B, H, T, T), the self-attention weights returned by self_attn

MultiHeadAttention and FeedForward are complete (the answers of the multi_head_attention and
feed_forward katas): use them, do not edit them.
Rules: work in the dtype and on the device of the input; do not modify the inputs.
Off limits: torch.nn.TransformerEncoderLayer, torch.nn.MultiheadAttention,
torch.nn.functional.scaled_dot_product_attention.
"""

import math

from torch import Tensor, nn


# ----------------------------------------------------------------------------- GIVEN: complete, do not edit

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


# ----------------------------------------------------------------------------- your part


class EncoderLayer(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        raise NotImplementedError("create self_attn, ffn, norm1, norm2 and dropout")

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        raise NotImplementedError("write EncoderLayer.forward: attention, add & norm, FFN, add & norm")
