# expect: spans all T_k
import math
import torch


def flash_attention(q, k, v, causal=False, block_size=16):
    T_q, T_k = q.size(-2), k.size(-2)
    outs = []
    for a in range(0, T_q, block_size):
        s = q[..., a:a + block_size, :] @ k.transpose(-2, -1) / math.sqrt(q.size(-1))  # (B, H, b, T_k)
        if causal:
            rows = torch.arange(a, a + s.size(-2), device=q.device)[:, None] + T_k - T_q
            s = s.masked_fill(torch.arange(T_k, device=q.device) > rows, float("-inf"))
        outs.append(torch.nan_to_num(s.softmax(-1), nan=0.0) @ v)
    return torch.cat(outs, dim=-2)
