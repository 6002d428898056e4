# expect: more than the bound
"""A loop over batch items and heads: each head still builds its own (T_q, T_k) score matrix."""
import math

import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    B, H, T_q, d_k = q.shape
    T_k = k.size(-2)
    heads = []
    for b in range(B):
        for h in range(H):
            s = q[b, h] @ k[b, h].T / math.sqrt(d_k)  # (T_q, T_k) for one head
            if causal:
                i = torch.arange(T_q, device=q.device)[:, None] + (T_k - T_q)
                j = torch.arange(T_k, device=q.device)[None, :]
                s = s.masked_fill(j > i, float("-inf"))
            w = torch.softmax(s, dim=-1).nan_to_num(0.0)
            heads.append(w @ v[b, h])
    return torch.stack(heads).view(B, H, T_q, v.size(-1))
