"""Encoder and decoder stacks: N deep copies of a layer, then a final LayerNorm (the PyTorch notebook tutorial).

Shape legend:
    B    batch size
    T_s  source length (the encoder's sequence)
    T_t  target length (the decoder's sequence)
    D    d_model
    H    num_heads
    d_k  D // H
    d_ff hidden size of the feed-forward network
    N    number of layers in a stack

Implement Encoder and Decoder:

    Encoder(x)  = norm(layer_N(... layer_2(layer_1(x, src_mask), src_mask) ..., src_mask))
    Decoder(y)  = norm(layer_N(... layer_1(y, memory, tgt_mask, memory_mask) ..., memory, tgt_mask, memory_mask))

MultiHeadAttention, FeedForward, EncoderLayer and DecoderLayer below are GIVEN (the references of
their own katas): use them, do not change them. The checker hands your stacks its own copies of
EncoderLayer / DecoderLayer, and also builds them around the classes given in this file.
    EncoderLayer.forward(x, src_mask=None) -> (x, self_weights)
    DecoderLayer.forward(y, memory, tgt_mask=None, memory_mask=None) -> (y, self_weights, cross_weights)
Both return tuples; the stacks keep only the first item.

Encoder(layer, N) and Decoder(layer, N): `layer` is a built layer instance; `N` an int >= 1.
They must create these submodules; the checker loads its weights into them by name, with
DIFFERENT weights in every layer:
    layers   nn.ModuleList of N independent copies of `layer` (copy.deepcopy), in order
    norm     nn.LayerNorm(d_model), applied once after the last layer;
             d_model = layer.self_attn.d_model

Encoder.forward(x, src_mask=None):
    x         (B, T_s, D) float tensor: the embedded source
    src_mask  None, or a bool tensor broadcastable to (B, H, T_s, T_s), e.g. padding (B, 1, 1, T_s)
    returns   (B, T_s, D), same dtype as x: the memory the decoder reads
Decoder.forward(y, memory, tgt_mask=None, memory_mask=None):
    y            (B, T_t, D) float tensor: the embedded target
    memory       (B, T_s, D) float tensor: the Encoder's output, read by EVERY decoder layer
    tgt_mask     None, or a bool tensor broadcastable to (B, H, T_t, T_t): causal (AND target padding)
    memory_mask  None, or a bool tensor broadcastable to (B, H, T_t, T_s): source padding (B, 1, 1, T_s)
    returns      (B, T_t, D), same dtype as y
Masks: True = this query may attend to this key; False = hidden.

Rules: work in the dtype and on the device of the inputs; do not modify the inputs.
Off limits: torch.nn.TransformerEncoder, torch.nn.TransformerDecoder.
"""

import copy
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
        return self.fc2(self.dropout(hidden))


class EncoderLayer(nn.Module):
    """The interview tutorial's encoder layer (post-LN): x = norm1(x + SelfAttn(x)); x = norm2(x + FFN(x)); returns (x, attn)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        # 1) self-attention: queries, keys and values all come from x
        sa_out, attn = self.self_attn(x, x, src_mask)  # (B, T, D), (B, H, T, T)
        # 2) residual + LayerNorm (post-LN: normalize the sum)
        x = self.norm1(x + self.dropout(sa_out))  # (B, T, D)
        # 3) position-wise FFN on the normalized x, residual from that same x, LayerNorm
        x = self.norm2(x + self.dropout(self.ffn(x)))  # (B, T, D) -> (B, T, d_ff) -> (B, T, D)
        return x, attn


class DecoderLayer(nn.Module):
    """Post-LN decoder layer (the interview tutorial): returns (y, self-attention weights, cross-attention weights)."""

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
        # 2) cross-attention: Q from the decoder, K and V from the encoder memory
        ca_out, cross_weights = self.cross_attn(y, memory, memory_mask)  # (B, T_t, D), (B, H, T_t, T_s)
        y = self.norm2(y + self.dropout(ca_out))
        # 3) position-wise feed-forward network
        y = self.norm3(y + self.dropout(self.ffn(y)))  # (B, T_t, D)
        return y, self_weights, cross_weights


# ============================================================================ the kata


class Encoder(nn.Module):
    def __init__(self, layer: nn.Module, N: int):
        super().__init__()
        raise NotImplementedError("create self.layers (N deep copies of layer in an nn.ModuleList) and self.norm")

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> Tensor:
        raise NotImplementedError("write Encoder.forward: every layer in turn, then the final norm")


class Decoder(nn.Module):
    def __init__(self, layer: nn.Module, N: int):
        super().__init__()
        raise NotImplementedError("create self.layers (N deep copies of layer in an nn.ModuleList) and self.norm")

    def forward(self, y: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None) -> Tensor:
        raise NotImplementedError("write Decoder.forward: every layer in turn (each reads memory), then the final norm")
