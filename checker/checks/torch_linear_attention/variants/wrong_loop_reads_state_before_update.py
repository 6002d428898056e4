# expect: query 0 does not see key 0
"""The RNN form, written as a loop that lets query t read the state S, z before key t is added to it: an exclusive
prefix (query 0 reads an empty state and gets 0)."""
import torch
import torch.nn.functional as F


def feature_map(x):
    return F.elu(x) + 1


def linear_attention(q, k, v, causal=False):
    pq, pk = feature_map(q), feature_map(k)
    if not causal:
        S = torch.einsum("bhtd,bhte->bhde", pk, v)
        z = pk.sum(dim=2)
        return torch.einsum("bhtd,bhde->bhte", pq, S) / torch.einsum("bhtd,bhd->bht", pq, z).unsqueeze(-1)
    B, H, T, d = pq.shape
    S = q.new_zeros(B, H, d, v.shape[-1])
    z = q.new_zeros(B, H, d)
    outs = []
    for t in range(T):
        num = torch.einsum("bhd,bhde->bhe", pq[:, :, t], S)
        den = torch.einsum("bhd,bhd->bh", pq[:, :, t], z).unsqueeze(-1)
        outs.append(num / (den + 1e-12))
        S = S + torch.einsum("bhd,bhe->bhde", pk[:, :, t], v[:, :, t])
        z = z + pk[:, :, t]
    return torch.stack(outs, dim=2)
