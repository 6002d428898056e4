# expect: receives tgt_embed's output; expected pos_enc call 2's output
"""Forgets the positional encoding on the target side."""
import math

import torch
from torch import Tensor, nn

# ============================================================================ given building blocks


class PositionalEncoding(nn.Module):
    """Adds the fixed sin/cos table to x: forward(x) = dropout(x + pe[:, :T])."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # 1) one angle per (position, column pair); float64 keeps the table exact to float32 rounding
        position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(D/2),) even column indices 2i
        angle = position / 10000.0 ** (two_i / d_model)  # (max_len, 1) / (ceil(D/2),) -> (max_len, ceil(D/2))
        # 2) even columns sin, odd columns cos; an odd d_model has one cos column fewer
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
        # 3) a buffer, not a parameter: saved in state_dict, moved by .to(), never trained
        self.register_buffer("pe", pe.unsqueeze(0).to(torch.get_default_dtype()))  # (1, max_len, D)

    def forward(self, x: Tensor) -> Tensor:
        T = x.size(1)
        return self.dropout(x + self.pe[:, :T])  # (B, T, D) + (1, T, D) -> (B, T, D)


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


class EncoderLayer(nn.Module):
    """Seed 003's encoder layer (post-LN): x = norm1(x + SelfAttn(x)); x = norm2(x + FFN(x)); returns (x, attn)."""

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
        # 2) cross-attention: Q from the decoder, K and V from the encoder memory
        ca_out, cross_weights = self.cross_attn(y, memory, memory_mask)  # (B, T_t, D), (B, H, T_t, T_s)
        y = self.norm2(y + self.dropout(ca_out))
        # 3) position-wise feed-forward network
        y = self.norm3(y + self.dropout(self.ffn(y)))  # (B, T_t, D)
        return y, self_weights, cross_weights


# ============================================================================ the kata


class Transformer(nn.Module):
    """Encoder-decoder Transformer (seed 003): forward(src, tgt) -> logits (B, T_t, V_t)."""

    def __init__(self, src_vocab: int, tgt_vocab: int, d_model: int = 256, num_heads: int = 8, d_ff: int = 512,
                 num_layers: int = 4, dropout: float = 0.1, max_len: int = 512, pad_id: int = 0):
        super().__init__()
        self.pad_id = pad_id
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)  # one table, shared by both sides
        self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.out_proj = nn.Linear(d_model, tgt_vocab)

    def encode(self, src: Tensor) -> Tensor:
        # 1) mask: every query sees the real (non-PAD) source keys
        src_mask = (src != self.pad_id)[:, None, None, :]  # (B, T_s) -> (B, 1, 1, T_s)
        # 2) embed, add positions, run the layers one after the other
        x = self.pos_enc(self.src_embed(src))  # (B, T_s) -> (B, T_s, D)
        for layer in self.encoder_layers:
            x, _ = layer(x, src_mask)  # (B, T_s, D)
        return x

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor) -> Tensor:
        # 1) masks: target keys that are real and not in the future; real source keys
        T_t = tgt.size(1)
        causal = torch.ones(T_t, T_t, dtype=torch.bool, device=tgt.device).tril()  # (T_t, T_t): key j <= query i
        tgt_mask = (tgt != self.pad_id)[:, None, None, :] & causal  # (B, 1, 1, T_t) & (T_t, T_t) -> (B, 1, T_t, T_t)
        memory_mask = (src != self.pad_id)[:, None, None, :]  # (B, T_s) -> (B, 1, 1, T_s)
        # 2) embed, add positions, run the layers; each cross-attends to the encoder's output
        y = self.tgt_embed(tgt)  # (B, T_t) -> (B, T_t, D)
        for layer in self.decoder_layers:
            y, _, _ = layer(y, memory, tgt_mask, memory_mask)  # (B, T_t, D)
        return y

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        memory = self.encode(src)  # (B, T_s, D)
        return self.out_proj(self.decode(tgt, memory, src))  # (B, T_t, D) -> (B, T_t, V_t)
