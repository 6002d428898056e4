"""Helper per module, summed: the way seed 003 lists them (MHA, FFN, LayerNorm)."""
import torch


def mha_params(d_model, num_heads, bias=True):
    per_proj = d_model * d_model + (d_model if bias else 0)
    return 4 * per_proj  # W_q, W_k, W_v, W_o


def ffn(d_model, d_ff, bias):
    return 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)


def layer_norm(d_model, bias):
    return 2 * d_model if bias else d_model


def encoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return mha_params(d_model, num_heads, bias) + ffn(d_model, d_ff, bias) + 2 * layer_norm(d_model, bias)


def decoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return 2 * mha_params(d_model, num_heads, bias) + ffn(d_model, d_ff, bias) + 3 * layer_norm(d_model, bias)


def transformer_params(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, bias=True, tie_embeddings=False):
    total = src_vocab * d_model + tgt_vocab * d_model
    total += num_layers * encoder_layer_params(d_model, num_heads, d_ff, bias)
    total += num_layers * decoder_layer_params(d_model, num_heads, d_ff, bias)
    if not tie_embeddings:
        total += tgt_vocab * d_model
    if bias:
        total += tgt_vocab
    return total


def attention_flops(batch_size, T_q, T_k, d_model, num_heads):
    d_k = d_model // num_heads
    q = 2 * batch_size * T_q * d_model * d_model
    k = 2 * batch_size * T_k * d_model * d_model
    v = 2 * batch_size * T_k * d_model * d_model
    scores = 2 * batch_size * num_heads * T_q * T_k * d_k
    av = 2 * batch_size * num_heads * T_q * T_k * d_k
    o = 2 * batch_size * T_q * d_model * d_model
    return q + k + v + scores + av + o


def ffn_flops(batch_size, T, d_model, d_ff):
    return 2 * batch_size * T * d_model * d_ff * 2


def kv_cache_bytes(batch_size, seq_len, num_layers, num_kv_heads, d_k, dtype):
    elements = 2 * num_layers * batch_size * num_kv_heads * seq_len * d_k  # K and V
    return elements * dtype.itemsize
