"""Self-contained: one attention helper with the heads as an einsum axis, an additive mask
(0 / -inf, built with np.where), rows that see nothing zeroed with np.nan_to_num; a sublayer loop."""

import numpy as np


def _attend(q_in, kv_in, mask, H, Wq, Wk, Wv, Wo):
    B, Tq, D = q_in.shape
    d = D // H
    q = (q_in @ Wq).reshape(B, Tq, H, d)
    k = (kv_in @ Wk).reshape(B, kv_in.shape[1], H, d)
    v = (kv_in @ Wv).reshape(B, kv_in.shape[1], H, d)
    scores = np.einsum("bqhd,bkhd->bhqk", q, k) / np.sqrt(d).astype(q.dtype)
    if mask is not None:
        scores = scores + np.where(mask, 0.0, -np.inf).astype(q.dtype)
    with np.errstate(invalid="ignore"):
        w = np.exp(scores - scores.max(-1, keepdims=True))
        w = np.nan_to_num(w / w.sum(-1, keepdims=True), nan=0.0)
    return np.einsum("bhqk,bkhd->bqhd", w, v).reshape(B, Tq, D) @ Wo


def _ln(a, g, b):
    mu = a.mean(-1, keepdims=True)
    return g * (a - mu) / np.sqrt(a.var(-1, keepdims=True) + 1e-6) + b


def decoder_layer(x, encoder_output, lookahead_mask, padding_mask, d_model, num_heads, d_ff,
                  Wq_msa, Wk_msa, Wv_msa, Wo_msa, gamma1_ln, beta1_ln,
                  Wq_ca, Wk_ca, Wv_ca, Wo_ca, gamma2_ln, beta2_ln,
                  W1_ffn, b1_ffn, W2_ffn, b2_ffn, gamma3_ln, beta3_ln):
    sublayers = [
        (lambda h: _attend(h, h, lookahead_mask, num_heads, Wq_msa, Wk_msa, Wv_msa, Wo_msa), gamma1_ln, beta1_ln),
        (lambda h: _attend(h, encoder_output, padding_mask, num_heads, Wq_ca, Wk_ca, Wv_ca, Wo_ca), gamma2_ln, beta2_ln),
        (lambda h: np.maximum(h @ W1_ffn + b1_ffn, 0) @ W2_ffn + b2_ffn, gamma3_ln, beta3_ln),
    ]
    h = x
    for sublayer, g, b in sublayers:
        h = _ln(h + sublayer(h), g, b)
    return h
