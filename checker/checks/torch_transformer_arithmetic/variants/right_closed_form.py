"""Closed forms, as an interview answer on the whiteboard; bytes from an empty tensor's element_size()."""
import torch


def mha_params(d_model, num_heads, bias=True):
    return 4 * d_model * (d_model + int(bias))


def encoder_layer_params(d_model, num_heads, d_ff, bias=True):
    b = int(bias)
    return 4 * d_model * (d_model + b) + 2 * d_model * d_ff + b * (d_ff + d_model) + 2 * (1 + b) * d_model


def decoder_layer_params(d_model, num_heads, d_ff, bias=True):
    b = int(bias)
    return encoder_layer_params(d_model, num_heads, d_ff, bias) + 4 * d_model * (d_model + b) + (1 + b) * d_model


def transformer_params(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, bias=True, tie_embeddings=False):
    layers = encoder_layer_params(d_model, num_heads, d_ff, bias) + decoder_layer_params(d_model, num_heads, d_ff, bias)
    embeddings = (src_vocab + tgt_vocab * (1 if tie_embeddings else 2)) * d_model
    return embeddings + num_layers * layers + int(bias) * tgt_vocab


def attention_flops(batch_size, T_q, T_k, d_model, num_heads):
    return 4 * batch_size * d_model * (d_model * (T_q + T_k) + T_q * T_k)


def ffn_flops(batch_size, T, d_model, d_ff):
    return 4 * batch_size * T * d_model * d_ff


def kv_cache_bytes(batch_size, seq_len, num_layers, num_kv_heads, d_k, dtype):
    per_element = torch.empty(0, dtype=dtype).element_size()
    return 2 * num_layers * batch_size * seq_len * num_kv_heads * d_k * per_element
