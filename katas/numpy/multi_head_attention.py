"""Multi-head attention with explicit weights (NumPy), with the NumPy tutorial's functions and signatures.

Shape legend:
    B        batch size
    T        sequence length (T_q for the queries, T_k for the keys and values)
    d_model  model size
    H        number of heads (num_heads)
    depth    size of one head, d_model // num_heads (the paper's d_k)

Implement, in this file (it is self-contained: softmax and scaled_dot_product_attention are yours
to fill in too, or copy them from the numpy/softmax and numpy/attention katas):

split_heads(x, num_heads, depth)
    x        (B, T, d_model)
    returns  (B, num_heads, T, depth): head h holds features h*depth .. (h+1)*depth - 1 of each position

combine_heads(x)
    x        (B, H, T, depth)
    returns  (B, T, H * depth): the inverse of split_heads

multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo)
    q        (B, T_q, d_model) float64 or float32
    k, v     (B, T_k, d_model) same dtype; q is k is v for self-attention, T_q != T_k for cross-attention
    mask     None, or a bool array broadcastable to (B, num_heads, T_q, T_k), e.g. (B, 1, 1, T_k) for
             padding or (T_q, T_k) for a look-ahead mask. True = this query may attend to this key.
    d_model, num_heads  ints; d_model % num_heads == 0
    Wq, Wk, Wv, Wo  (d_model, d_model), same dtype; applied as x @ W (no bias)
    returns (output, attention_weights):
        output             (B, T_q, d_model), same dtype as q
        attention_weights  (B, num_heads, T_q, T_k), same dtype as q; hidden keys get exactly 0
    A query with no visible key gets all-zero weights (and its attention output is zero).

Rules: keep the dtype (float32 in, float32 out); do not modify the inputs; no Python loop over the heads is needed.
Off limits: torch (do not import it), scipy.special.softmax.
"""

import numpy as np


def softmax(x: np.ndarray, axis: int = -1) -> np.ndarray:
    """Numerically stable softmax along axis (a helper)."""
    raise NotImplementedError("write the body of softmax (or copy yours from the numpy/softmax kata)")


def scaled_dot_product_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray,
                                 mask: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """(..., T_q, d_k), (..., T_k, d_k), (..., T_k, d_v) -> output (..., T_q, d_v), weights (..., T_q, T_k)."""
    raise NotImplementedError("write the body of scaled_dot_product_attention (or copy yours from numpy/attention)")


def split_heads(x: np.ndarray, num_heads: int, depth: int) -> np.ndarray:
    raise NotImplementedError("write the body of split_heads")


def combine_heads(x: np.ndarray) -> np.ndarray:
    raise NotImplementedError("write the body of combine_heads")


def multi_head_attention(q, k, v, mask, d_model, num_heads, Wq, Wk, Wv, Wo):
    raise NotImplementedError("write the body of multi_head_attention")
