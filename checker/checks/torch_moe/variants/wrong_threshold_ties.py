# expect: keeps every tied expert
"""Selects the experts whose probability reaches the k-th largest: right without ties."""
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
        probs = self.gate(x).softmax(dim=-1)
        kth = probs.topk(self.top_k, dim=-1).values[..., -1:]
        selected = probs >= kth  # (B, T, E)
        weights = torch.where(selected, probs, torch.zeros_like(probs))
        weights = weights / weights.sum(dim=-1, keepdim=True)
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            b, t = torch.where(selected[..., e])
            y[b, t] += weights[b, t, e, None] * expert(x[b, t])
        f = selected.to(x.dtype).mean(dim=(0, 1))
        return y, self.num_experts * (f * probs.mean(dim=(0, 1))).sum()
