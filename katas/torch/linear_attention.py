"""Linear attention (Katharopoulos et al., "Transformers are RNNs: Fast Autoregressive Transformers
with Linear Attention", ICML 2020).

Shape legend:
    B    batch size
    H    number of heads
    T_q  query length (T_q == T_k when causal)
    T_k  key (and value) length
    d_k  query/key size per head
    d_v  value size per head

Softmax attention costs O(T_q T_k) time and memory: the (T_q, T_k) matrix of scores. Linear
attention replaces the similarity exp(q . k) by a kernel phi(q) . phi(k) with a positive feature
map, and then reorders the products so that no (T_q, T_k) matrix is ever formed:

    out_i = sum_j (phi(q_i) . phi(k_j)) v_j / sum_j (phi(q_i) . phi(k_j))
          = phi(q_i) S / (phi(q_i) . z),     S = sum_j phi(k_j)^T v_j  (d_k, d_v),  z = sum_j phi(k_j)  (d_k,)

feature_map(x) -> phi(x) = elu(x) + 1, elementwise, same shape and dtype as x (positive everywhere).

linear_attention(q, k, v, causal=False) -> out
    q (B, H, T_q, d_k), k (B, H, T_k, d_k), v (B, H, T_k, d_v) float tensors
    out (B, H, T_q, d_v), same dtype as q.
    causal=False: every query sees every key: S and z are sums over all T_k keys.
    causal=True (T_q == T_k): query i sees keys 0..i (itself included): S_i and z_i are PREFIX sums
        over j <= i (torch.cumsum, or a loop that carries S and z: the RNN view of the paper).
    No 1/sqrt(d_k) scale and no epsilon: phi > 0, so the denominator is positive.
    Memory: no tensor larger than B * H * max(T_q, T_k) * d_k * d_v elements (the causal prefix
    sums of S); in particular never a (T_q, T_k) matrix, not even one head at a time.

Rules: do not modify the inputs.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention.
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def feature_map(x: Tensor) -> Tensor:
    raise NotImplementedError("write feature_map: elu(x) + 1")


def linear_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    raise NotImplementedError("write linear_attention: phi(q) (phi(k)^T v) / (phi(q) . sum of phi(k)), "
                              "prefix sums when causal")
