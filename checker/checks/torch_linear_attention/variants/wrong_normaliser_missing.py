# expect: a term dropped from a sum, or a factor from a product
"""phi(Q) (phi(K)^T V) returned as it is: the normaliser is missing."""
import torch
import torch.nn.functional as F


def feature_map(x):
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False):
    Q, K = feature_map(q), feature_map(k)
    if causal:
        KV = torch.cumsum(K.unsqueeze(-1) * v.unsqueeze(-2), dim=2)
        Z = torch.cumsum(K, dim=2)
        num = (Q.unsqueeze(-1) * KV).sum(dim=-2)
        den = (Q * Z).sum(dim=-1, keepdim=True)
        return num
    KV = torch.einsum("bhsd,bhse->bhde", K, v)
    Z = K.sum(dim=2)
    num = torch.einsum("bhld,bhde->bhle", Q, KV)
    den = torch.einsum("bhld,bhd->bhl", Q, Z).unsqueeze(-1)
    return num
