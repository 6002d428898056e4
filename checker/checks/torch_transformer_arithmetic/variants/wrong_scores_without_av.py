# expect: not the weighted sum A V
import torch


def mha_params(d_model, num_heads, bias=True):
    return 4 * d_model * d_model + (4 * d_model if bias else 0)


def _ffn(d_model, d_ff, bias):
    return 2 * d_model * d_ff + ((d_ff + d_model) if bias else 0)


def _ln(d_model, bias):
    return 2 * d_model if bias else d_model


def encoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return mha_params(d_model, num_heads, bias) + _ffn(d_model, d_ff, bias) + 2 * _ln(d_model, bias)


def decoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return 2 * mha_params(d_model, num_heads, bias) + _ffn(d_model, d_ff, bias) + 3 * _ln(d_model, bias)


def transformer_params(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, bias=True, tie_embeddings=False):
    emb = (src_vocab + tgt_vocab) * d_model
    layers = num_layers * (encoder_layer_params(d_model, num_heads, d_ff, bias)
                           + decoder_layer_params(d_model, num_heads, d_ff, bias))
    out = (0 if tie_embeddings else d_model * tgt_vocab) + (tgt_vocab if bias else 0)
    return emb + layers + out


def attention_flops(batch_size, T_q, T_k, d_model, num_heads):
    return 2 * batch_size * ((2 * T_q + 2 * T_k) * d_model ** 2 + T_q * T_k * d_model)


def ffn_flops(batch_size, T, d_model, d_ff):
    return 4 * batch_size * T * d_model * d_ff


def kv_cache_bytes(batch_size, seq_len, num_layers, num_kv_heads, d_k, dtype):
    itemsize = torch.empty((), dtype=dtype).element_size()
    return num_layers * 2 * batch_size * num_kv_heads * seq_len * d_k * itemsize
