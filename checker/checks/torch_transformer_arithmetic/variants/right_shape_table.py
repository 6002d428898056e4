"""Lists every parameter's shape as named_parameters() would, and multiplies out; FLOPs per matmul; bytes
from the dtype's bit width."""
import math

import torch


def _linear(name, d_in, d_out, bias):
    shapes = {f"{name}.weight": (d_out, d_in)}
    if bias:
        shapes[f"{name}.bias"] = (d_out,)
    return shapes


def _norm(name, d, bias):
    return {f"{name}.weight": (d,), **({f"{name}.bias": (d,)} if bias else {})}


def _mha_shapes(prefix, d, bias):
    out = {}
    for proj in ("W_q", "W_k", "W_v", "W_o"):
        out.update(_linear(f"{prefix}.{proj}", d, d, bias))
    return out


def _ffn_shapes(prefix, d, d_ff, bias):
    return {**_linear(f"{prefix}.fc1", d, d_ff, bias), **_linear(f"{prefix}.fc2", d_ff, d, bias)}


def _count(shapes):
    return sum(math.prod(s) for s in shapes.values())


def mha_params(d_model, num_heads, bias=True):
    return _count(_mha_shapes("attn", d_model, bias))


def _encoder_shapes(p, d, d_ff, bias):
    return {**_mha_shapes(f"{p}.self_attn", d, bias), **_ffn_shapes(f"{p}.ffn", d, d_ff, bias),
            **_norm(f"{p}.norm1", d, bias), **_norm(f"{p}.norm2", d, bias)}


def _decoder_shapes(p, d, d_ff, bias):
    return {**_mha_shapes(f"{p}.self_attn", d, bias), **_mha_shapes(f"{p}.cross_attn", d, bias),
            **_ffn_shapes(f"{p}.ffn", d, d_ff, bias), **_norm(f"{p}.norm1", d, bias),
            **_norm(f"{p}.norm2", d, bias), **_norm(f"{p}.norm3", d, bias)}


def encoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return _count(_encoder_shapes("enc", d_model, d_ff, bias))


def decoder_layer_params(d_model, num_heads, d_ff, bias=True):
    return _count(_decoder_shapes("dec", d_model, d_ff, bias))


def transformer_params(src_vocab, tgt_vocab, d_model, num_heads, d_ff, num_layers, bias=True, tie_embeddings=False):
    shapes = {"src_embed.weight": (src_vocab, d_model), "tgt_embed.weight": (tgt_vocab, d_model)}
    for i in range(num_layers):
        shapes.update(_encoder_shapes(f"encoder.{i}", d_model, d_ff, bias))
        shapes.update(_decoder_shapes(f"decoder.{i}", d_model, d_ff, bias))
    shapes.update(_linear("out_proj", d_model, tgt_vocab, bias))
    if tie_embeddings:
        del shapes["out_proj.weight"]  # the same tensor as tgt_embed.weight
    return _count(shapes)


def _matmul(m, k, n):
    return 2 * m * k * n  # one multiply and one add per term


def attention_flops(batch_size, T_q, T_k, d_model, num_heads):
    d_k = d_model // num_heads
    flops = _matmul(batch_size * T_q, d_model, d_model)  # W_q
    flops += 2 * _matmul(batch_size * T_k, d_model, d_model)  # W_k, W_v
    flops += batch_size * num_heads * (_matmul(T_q, d_k, T_k) + _matmul(T_q, T_k, d_k))  # QK^T, AV
    flops += _matmul(batch_size * T_q, d_model, d_model)  # W_o
    return flops


def ffn_flops(batch_size, T, d_model, d_ff):
    return _matmul(batch_size * T, d_model, d_ff) + _matmul(batch_size * T, d_ff, d_model)


def kv_cache_bytes(batch_size, seq_len, num_layers, num_kv_heads, d_k, dtype):
    bits = torch.finfo(dtype).bits if dtype.is_floating_point else torch.iinfo(dtype).bits
    return num_layers * 2 * batch_size * num_kv_heads * seq_len * d_k * (bits // 8)
