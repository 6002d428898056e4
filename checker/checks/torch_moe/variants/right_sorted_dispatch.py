"""Tokens sorted by expert and run in contiguous chunks (the grouped-GEMM layout of MegaBlocks and
DeepSeek-MoE), then scattered back."""
import torch
import torch.nn.functional as F
from torch import nn


class Expert(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


class MoE(nn.Module):
    def __init__(self, d_model, d_ff, num_experts, top_k=2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d_model, d_ff) for _ in range(num_experts)])

    def forward(self, x):
        B, T, D = x.shape
        h = x.reshape(B * T, D)
        probs = torch.softmax(self.gate(h), dim=-1)  # (N, E)
        top_w, top_e = probs.topk(self.top_k, dim=-1)  # (N, k)
        top_w = top_w / top_w.sum(-1, keepdim=True)
        flat_e = top_e.reshape(-1)  # (N·k,)
        order = torch.argsort(flat_e, stable=True)
        token_of = order // self.top_k  # which token each sorted assignment belongs to
        counts = torch.bincount(flat_e, minlength=self.num_experts).tolist()
        chunks = torch.split(h[token_of], counts)
        outs = torch.cat([self.experts[e](chunk) for e, chunk in enumerate(chunks)])  # (N·k, D)
        outs = outs * top_w.reshape(-1)[order, None]
        y = torch.zeros_like(h).index_add(0, token_of, outs)
        f = torch.tensor(counts, dtype=x.dtype) / (B * T)
        aux = self.num_experts * (f * probs.mean(0)).sum()
        return y.reshape(B, T, D), aux
