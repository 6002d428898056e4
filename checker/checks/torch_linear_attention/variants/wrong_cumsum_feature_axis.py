# expect: an off-by-one in a range, slice, index or position
"""Causal prefix sums taken over the feature axes (dim=-2 / dim=-1) instead of the positions."""
import torch


def feature_map(x):
    return torch.nn.functional.elu(x) + 1


def linear_attention(q, k, v, causal=False):
    phi_q, phi_k = feature_map(q), feature_map(k)
    if causal:
        S = torch.cumsum(phi_k.unsqueeze(-1) * v.unsqueeze(-2), dim=-2)
        z = torch.cumsum(phi_k, dim=-1)
        return torch.einsum("bhtd,bhtde->bhte", phi_q, S) / (phi_q * z).sum(-1, keepdim=True)
    S = phi_k.transpose(-2, -1) @ v
    z = phi_k.sum(dim=-2)
    return (phi_q @ S) / (phi_q * z.unsqueeze(-2)).sum(-1, keepdim=True)
