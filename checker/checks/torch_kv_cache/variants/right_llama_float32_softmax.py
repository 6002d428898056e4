# followup: LLaMA's float32 softmax was recognised
"""Meta's LLaMA Attention.forward (llama/model.py) adapted to the kata's interface: the caches come in and go
out instead of living in preallocated buffers (start_pos is k_cache.size(2)), W_* keep their bias, and the
causal mask is built as LLaMA's Transformer.forward builds it (-inf above the diagonal, zeros for the cache).
The softmax runs in float32: F.softmax(scores.float(), dim=-1).type_as(xq)."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model, num_heads):
        super().__init__()
        self.n_local_heads = num_heads
        self.head_dim = d_model // num_heads
        self.W_q = nn.Linear(d_model, num_heads * self.head_dim)
        self.W_k = nn.Linear(d_model, num_heads * self.head_dim)
        self.W_v = nn.Linear(d_model, num_heads * self.head_dim)
        self.W_o = nn.Linear(num_heads * self.head_dim, d_model)

    def forward(self, x, k_cache=None, v_cache=None):
        bsz, seqlen, _ = x.shape
        start_pos = 0 if k_cache is None else k_cache.size(2)
        xq, xk, xv = self.W_q(x), self.W_k(x), self.W_v(x)
        xq = xq.view(bsz, seqlen, self.n_local_heads, self.head_dim).transpose(1, 2)
        xk = xk.view(bsz, seqlen, self.n_local_heads, self.head_dim).transpose(1, 2)
        xv = xv.view(bsz, seqlen, self.n_local_heads, self.head_dim).transpose(1, 2)

        keys = xk if k_cache is None else torch.cat([k_cache, xk], dim=2)  # (bs, n_local_heads, cache_len + seqlen, head_dim)
        values = xv if v_cache is None else torch.cat([v_cache, xv], dim=2)

        mask = None
        if seqlen > 1:
            mask = torch.full((seqlen, seqlen), float("-inf"), device=x.device)
            mask = torch.triu(mask, diagonal=1)
            # When performing key-value caching, we compute the attention scores
            # only for the new sequence. Thus, the matrix of scores is of size
            # (seqlen, cache_len + seqlen), and the only masked entries are (i, j) for
            # j > cache_len + i, since row i corresponds to token cache_len + i.
            mask = torch.hstack([torch.zeros((seqlen, start_pos), device=x.device), mask]).type_as(x)

        scores = torch.matmul(xq, keys.transpose(2, 3)) / math.sqrt(self.head_dim)
        if mask is not None:
            scores = scores + mask  # (bs, n_local_heads, seqlen, cache_len + seqlen)
        scores = F.softmax(scores.float(), dim=-1).type_as(xq)
        output = torch.matmul(scores, values)  # (bs, n_local_heads, seqlen, head_dim)
        output = output.transpose(1, 2).contiguous().view(bsz, seqlen, -1)
        return self.W_o(output), keys, values
