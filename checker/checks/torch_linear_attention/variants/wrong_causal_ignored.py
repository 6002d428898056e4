# expect: a branch taken always, or never (training, eval, a flag)
"""causal=True ignored: the non-causal sums for every call."""
import torch
import torch.nn.functional as F


def feature_map(x):
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False):
    Q, K = feature_map(q), feature_map(k)
    if False:
        KV = torch.cumsum(K.unsqueeze(-1) * v.unsqueeze(-2), dim=2)
        Z = torch.cumsum(K, dim=2)
        num = (Q.unsqueeze(-1) * KV).sum(dim=-2)
        den = (Q * Z).sum(dim=-1, keepdim=True)
        return num / den
    KV = torch.einsum("bhsd,bhse->bhde", K, v)
    Z = K.sum(dim=2)
    num = torch.einsum("bhld,bhde->bhle", Q, KV)
    den = torch.einsum("bhld,bhd->bhl", Q, Z).unsqueeze(-1)
    return num / den
