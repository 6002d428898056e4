import torch


def mha_params(d_model, num_heads, bias=True):
    weights = 4 * d_model ** 2
    biases = 4 * d_model
    return weights + biases * int(bias)


def encoder_layer_params(d_model, num_heads, d_ff, bias=True):
    D = d_model
    p = 4 * D * D + 2 * D * d_ff + 2 * D           # W_q, W_k, W_v, W_o, fc1, fc2, two gammas
    if bias:
        p += 4 * D + d_ff + D + 2 * D                # their biases and the two betas
    return p


def decoder_layer_params(d_model, num_heads, d_ff, bias=True):
    D = d_model
    p = 8 * D * D + 2 * D * d_ff + 3 * D
    if bias:
        p += 8 * D + d_ff + D + 3 * D
    return p


def transformer_params(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, bias=True, tie_embeddings=False):
    n = num_layers * (encoder_layer_params(d_model, num_heads, d_ff, bias)
                      + decoder_layer_params(d_model, num_heads, d_ff, bias))
    n += src_vocab * d_model + tgt_vocab * d_model
    if not tie_embeddings:
        n += d_model * tgt_vocab
    if bias:
        n += tgt_vocab
    return n


def attention_flops(batch_size, T_q, T_k, d_model, num_heads):
    macs = batch_size * (2 * T_q * d_model * d_model + 2 * T_k * d_model * d_model + 2 * T_q * T_k * d_model)
    return 2 * macs


def ffn_flops(batch_size, T, d_model, d_ff):
    macs = batch_size * T * (d_model * d_ff + d_ff * d_model)
    return 2 * macs


def kv_cache_bytes(batch_size, seq_len, num_layers, num_kv_heads, d_k, dtype):
    bits = torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits
    return 2 * num_layers * batch_size * seq_len * num_kv_heads * d_k * bits // 8
