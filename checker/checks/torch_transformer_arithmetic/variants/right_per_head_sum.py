import torch


def linear(n_in, n_out, bias):
    return n_in * n_out + (n_out if bias else 0)


def layer_norm(d, bias):
    return d + (d if bias else 0)


def mha_params(d_model, num_heads, bias=True):
    d_k = d_model // num_heads
    per_head = 3 * linear(d_model, d_k, bias)            # this head's slice of W_q, W_k, W_v
    return num_heads * per_head + linear(d_model, d_model, bias)


def ffn_params(d_model, d_ff, bias):
    return linear(d_model, d_ff, bias) + linear(d_ff, d_model, bias)


def encoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return mha_params(d_model, num_heads, bias) + ffn_params(d_model, d_ff, bias) + 2 * layer_norm(d_model, bias)


def decoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return (mha_params(d_model, num_heads, bias) * 2 + ffn_params(d_model, d_ff, bias)
            + 3 * layer_norm(d_model, bias))


def transformer_params(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, bias=True, tie_embeddings=False):
    total = src_vocab * d_model + tgt_vocab * d_model
    total += num_layers * encoder_layer_params(d_model, num_heads, d_ff, bias)
    total += num_layers * decoder_layer_params(d_model, num_heads, d_ff, bias)
    total += linear(d_model, tgt_vocab, bias)
    if tie_embeddings:
        total -= tgt_vocab * d_model
    return total


def matmul(m, k, n):
    return 2 * m * k * n


def attention_flops(batch_size, T_q, T_k, d_model, num_heads):
    d_k = d_model // num_heads
    B = batch_size
    proj = matmul(B * T_q, d_model, d_model) + 2 * matmul(B * T_k, d_model, d_model)
    heads = B * num_heads * (matmul(T_q, d_k, T_k) + matmul(T_q, T_k, d_k))
    out = matmul(B * T_q, d_model, d_model)
    return proj + heads + out


def ffn_flops(batch_size, T, d_model, d_ff):
    return matmul(batch_size * T, d_model, d_ff) + matmul(batch_size * T, d_ff, d_model)


def kv_cache_bytes(batch_size, seq_len, num_layers, num_kv_heads, d_k, dtype):
    per_token = 2 * num_kv_heads * d_k * dtype.itemsize          # K and V
    return num_layers * batch_size * seq_len * per_token
