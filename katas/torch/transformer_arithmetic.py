"""Transformer arithmetic (the interview tutorial's 参数量分析 and 时间/空间复杂度): parameters, FLOPs, KV-cache bytes.

Legend (no tensors here: whole numbers only):
    B         batch_size
    T, T_q, T_k  sequence lengths (queries, keys)
    D         d_model
    H         num_heads (H divides D); d_k = D // H
    d_ff      the FFN's hidden width
    N         num_layers (N encoder layers AND N decoder layers)
    V_s, V_t  src_vocab, tgt_vocab

Every function returns an exact Python int (never a float: use //, not /).

Parameters: the layers of the interview tutorial (post-LN), built from nn.Linear, nn.LayerNorm and nn.Embedding.
    MultiHeadAttention  W_q, W_k, W_v, W_o: four (D, D) weights, each with a bias of D
    FeedForward         fc1 (D -> d_ff) and fc2 (d_ff -> D), each with its bias (d_ff, then D)
    LayerNorm           gamma and beta, D each
    EncoderLayer        self-attention, FFN, 2 LayerNorms
    DecoderLayer        masked self-attention, cross-attention, FFN, 3 LayerNorms
    Transformer         src_embed (V_s, D), tgt_embed (V_t, D), N encoder layers, N decoder layers,
                        out_proj: nn.Linear(D, V_t) with its bias; the sinusoidal positional
                        encoding is a buffer (no parameters), and there is no final LayerNorm after either stack
                        (nn.Transformer adds one to each; the interview tutorial does not).
bias=False drops EVERY additive bias: the Linear biases AND LayerNorm's beta, as
nn.TransformerEncoderLayer(..., bias=False) does (gamma stays). tie_embeddings=True shares
out_proj.weight with tgt_embed.weight (counted once); out_proj's bias stays, if bias=True.
The count does not depend on num_heads (H · d_k = D).

FLOPs (forward pass only): a multiply-add counts 2 FLOPs, so (m, k) @ (k, n) costs 2·m·k·n.
Count the matrix products only: no bias, softmax, scale, mask, activation or LayerNorm.
    attention_flops  multi-head cross-attention, queries (B, T_q, D), keys/values (B, T_k, D):
                     the projections Q = x_q W_q, K = x_kv W_k, V = x_kv W_v, the scores
                     Q_h K_hᵀ and the weighted sum A_h V_h in every head, and the output W_o.
                     (Self-attention is T_q = T_k = T.)
    ffn_flops        the FFN on (B, T, D): fc1 then fc2.

KV cache (inference): every layer keeps K AND V, each (B, num_kv_heads, T, d_k), in dtype
(a torch.dtype: float32 4 bytes, float16 and bfloat16 2, int8 1, float64 8). num_kv_heads is H
for MHA (fewer for GQA/MQA).

Off limits: building the modules and counting (nn.Linear, nn.LayerNorm, nn.Embedding,
nn.MultiheadAttention, nn.Transformer*), and torch.utils.flop_counter.
"""

import torch


def mha_params(d_model: int, num_heads: int, bias: bool = True) -> int:
    """Parameters of one MultiHeadAttention (W_q, W_k, W_v, W_o)."""
    raise NotImplementedError("write mha_params: four (D, D) projections and their biases")


def encoder_layer_params(d_model: int, num_heads: int, d_ff: int, bias: bool = True) -> int:
    """Parameters of one EncoderLayer: self-attention, FFN, 2 LayerNorms."""
    raise NotImplementedError("write encoder_layer_params")


def decoder_layer_params(d_model: int, num_heads: int, d_ff: int, bias: bool = True) -> int:
    """Parameters of one DecoderLayer: self-attention, cross-attention, FFN, 3 LayerNorms."""
    raise NotImplementedError("write decoder_layer_params")


def transformer_params(src_vocab: int, tgt_vocab: int, d_model: int, num_heads: int, d_ff: int, num_layers: int,
                       bias: bool = True, tie_embeddings: bool = False) -> int:
    """Parameters of the interview tutorial's whole Transformer: embeddings, N + N layers, out_proj."""
    raise NotImplementedError("write transformer_params")


def attention_flops(batch_size: int, T_q: int, T_k: int, d_model: int, num_heads: int) -> int:
    """FLOPs of one multi-head attention forward: projections, scores, weighted sum, W_o."""
    raise NotImplementedError("write attention_flops: 2 FLOPs per multiply-add")


def ffn_flops(batch_size: int, T: int, d_model: int, d_ff: int) -> int:
    """FLOPs of the position-wise FFN forward on (B, T, D)."""
    raise NotImplementedError("write ffn_flops")


def kv_cache_bytes(batch_size: int, seq_len: int, num_layers: int, num_kv_heads: int, d_k: int,
                   dtype: torch.dtype) -> int:
    """Bytes of the K and V caches of every layer for seq_len positions."""
    raise NotImplementedError("write kv_cache_bytes: K and V, every layer, bytes per element of dtype")
