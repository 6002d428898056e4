"""The paper's RNN view (section 3.4) for causal: a state (S, z) carried over the positions, updated
before it is read; the non-causal case with the associativity written as matmuls."""
import torch


def feature_map(x):
    return torch.where(x > 0, x + 1, torch.exp(x))  # elu(x) + 1, written out


def linear_attention(q, k, v, causal=False):
    phi_q, phi_k = feature_map(q), feature_map(k)
    if not causal:
        S = phi_k.transpose(-2, -1) @ v  # (B, H, d_k, d_v)
        z = phi_k.sum(dim=-2)  # (B, H, d_k)
        return (phi_q @ S) / (phi_q * z.unsqueeze(-2)).sum(-1, keepdim=True)
    B, H, T, d_k = q.shape
    S = torch.zeros(B, H, d_k, v.size(-1), dtype=q.dtype, device=q.device)
    z = torch.zeros(B, H, d_k, dtype=q.dtype, device=q.device)
    out = []
    for i in range(T):
        S = S + phi_k[:, :, i, :, None] * v[:, :, i, None, :]
        z = z + phi_k[:, :, i]
        num = (phi_q[:, :, i, :, None] * S).sum(dim=-2)  # (B, H, d_v)
        den = (phi_q[:, :, i] * z).sum(dim=-1, keepdim=True)  # (B, H, 1)
        out.append(num / den)
    return torch.stack(out, dim=2)
