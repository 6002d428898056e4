"""Transformer arithmetic (the interview tutorial's 参数量分析 and 时间/空间复杂度), reference answer.

Legend: B batch_size, T/T_q/T_k lengths, D d_model, H num_heads, d_k = D // H, d_ff, N num_layers,
V_s/V_t vocabularies. Every result is an exact int. FLOPs: a multiply-add = 2 FLOPs, matrix
products only. bias=False drops every Linear bias and LayerNorm's beta (as nn.TransformerEncoderLayer).
"""

import torch


def _linear(d_in: int, d_out: int, bias: bool) -> int:
    return d_in * d_out + (d_out if bias else 0)  # weight (d_out, d_in) + bias (d_out,)


def _layer_norm(d_model: int, bias: bool) -> int:
    return d_model + (d_model if bias else 0)  # gamma (D,) + beta (D,)


def mha_params(d_model: int, num_heads: int, bias: bool = True) -> int:
    """W_q, W_k, W_v, W_o: 4·D² (+ 4·D biases); independent of H since H · d_k = D."""
    return 4 * _linear(d_model, d_model, bias)


def _ffn_params(d_model: int, d_ff: int, bias: bool) -> int:
    return _linear(d_model, d_ff, bias) + _linear(d_ff, d_model, bias)  # fc1 + fc2: 2·D·d_ff (+ d_ff + D)


def encoder_layer_params(d_model: int, num_heads: int, d_ff: int, bias: bool = True) -> int:
    """Self-attention + FFN + 2 LayerNorms: 12·D² when d_ff = 4·D, biases and LayerNorms aside."""
    return (mha_params(d_model, num_heads, bias) + _ffn_params(d_model, d_ff, bias)
            + 2 * _layer_norm(d_model, bias))


def decoder_layer_params(d_model: int, num_heads: int, d_ff: int, bias: bool = True) -> int:
    """Masked self-attention + cross-attention + FFN + 3 LayerNorms: 16·D² when d_ff = 4·D."""
    return (2 * mha_params(d_model, num_heads, bias) + _ffn_params(d_model, d_ff, bias)
            + 3 * _layer_norm(d_model, bias))


def transformer_params(src_vocab: int, tgt_vocab: int, d_model: int, num_heads: int, d_ff: int, num_layers: int,
                       bias: bool = True, tie_embeddings: bool = False) -> int:
    """Embeddings + N encoder layers + N decoder layers + out_proj (its weight shared when tied)."""
    embeddings = (src_vocab + tgt_vocab) * d_model  # src_embed (V_s, D), tgt_embed (V_t, D)
    layers = num_layers * (encoder_layer_params(d_model, num_heads, d_ff, bias)
                           + decoder_layer_params(d_model, num_heads, d_ff, bias))
    out_proj = _linear(d_model, tgt_vocab, bias)  # weight (V_t, D) + bias (V_t,)
    if tie_embeddings:
        out_proj -= tgt_vocab * d_model  # the weight IS tgt_embed.weight: counted once
    return embeddings + layers + out_proj


def attention_flops(batch_size: int, T_q: int, T_k: int, d_model: int, num_heads: int) -> int:
    """2 FLOPs per multiply-add over Q, K, V projections, Q_h K_hᵀ, A_h V_h and W_o."""
    d_k = d_model // num_heads
    projections = (2 * T_q + 2 * T_k) * d_model * d_model  # W_q, W_o on T_q rows; W_k, W_v on T_k rows
    # every head: (T_q, d_k) x (d_k, T_k) -> (T_q, T_k), then (T_q, T_k) x (T_k, d_k) -> (T_q, d_k)
    heads = num_heads * 2 * T_q * T_k * d_k
    return 2 * batch_size * (projections + heads)


def ffn_flops(batch_size: int, T: int, d_model: int, d_ff: int) -> int:
    """fc1 (B·T, D) x (D, d_ff) and fc2 (B·T, d_ff) x (d_ff, D), 2 FLOPs per multiply-add."""
    return 2 * 2 * batch_size * T * d_model * d_ff


def kv_cache_bytes(batch_size: int, seq_len: int, num_layers: int, num_kv_heads: int, d_k: int,
                   dtype: torch.dtype) -> int:
    """K and V, each (B, num_kv_heads, T, d_k), in every layer, dtype.itemsize bytes per element."""
    per_layer = 2 * batch_size * num_kv_heads * seq_len * d_k  # K and V: 2 x (B, H_kv, T, d_k)
    return num_layers * per_layer * dtype.itemsize
