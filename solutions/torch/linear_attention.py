"""Linear attention (Katharopoulos et al., "Transformers are RNNs", 2020), reference answer.

Shape legend:
    B    batch size
    H    number of heads
    T_q  query length (T_q == T_k when causal)
    T_k  key (and value) length
    d_k  query/key size per head
    d_v  value size per head

softmax(q k^T) is replaced by the kernel phi(q) . phi(k), phi(x) = elu(x) + 1 > 0, so the sum over
the keys can be taken once: out_i = phi(q_i) S / (phi(q_i) . z), S = sum_j phi(k_j)^T v_j, z = sum_j phi(k_j).
"""

import torch
import torch.nn.functional as F
from torch import Tensor


def feature_map(x: Tensor) -> Tensor:
    """phi(x) = elu(x) + 1, elementwise: positive everywhere, (...) -> (...)."""
    return F.elu(x) + 1


def linear_attention(q: Tensor, k: Tensor, v: Tensor, causal: bool = False) -> Tensor:
    """(B, H, T_q, d_k), (B, H, T_k, d_k), (B, H, T_k, d_v) -> (B, H, T_q, d_v) in O(T d_k d_v)."""
    phi_q, phi_k = feature_map(q), feature_map(k)  # (B, H, T_q, d_k), (B, H, T_k, d_k)
    time = 2  # the positions' axis, in (B, H, T, d) and in (B, H, T, d_k, d_v) alike
    if causal:
        # 1) prefix sums over the positions: S_i = sum_{j <= i} phi(k_j)^T v_j, z_i = sum_{j <= i} phi(k_j)
        S = torch.einsum("bhtd,bhte->bhtde", phi_k, v).cumsum(dim=time)  # (B, H, T, d_k, d_v)
        z = phi_k.cumsum(dim=time)  # (B, H, T, d_k)
        # 2) each query reads its own prefix
        numerator = torch.einsum("bhtd,bhtde->bhte", phi_q, S)  # (B, H, T, d_k) x (B, H, T, d_k, d_v) -> (B, H, T, d_v)
        denominator = (phi_q * z).sum(dim=-1, keepdim=True)  # (B, H, T, 1)
    else:
        # 1) one summary of all keys and values: S = phi(K)^T V, z = phi(K)^T 1
        S = phi_k.mT @ v  # (B, H, d_k, T_k) x (B, H, T_k, d_v) -> (B, H, d_k, d_v)
        z = phi_k.sum(dim=time, keepdim=True).mT  # (B, H, 1, d_k) -> (B, H, d_k, 1)
        # 2) every query reads the same summary
        numerator = phi_q @ S  # (B, H, T_q, d_k) x (B, H, d_k, d_v) -> (B, H, T_q, d_v)
        denominator = phi_q @ z  # (B, H, T_q, d_k) x (B, H, d_k, 1) -> (B, H, T_q, 1)
    # 3) normalise: the weights phi(q_i) . phi(k_j) / sum_j of them sum to 1 over the keys
    return numerator / denominator  # (B, H, T_q, d_v)
