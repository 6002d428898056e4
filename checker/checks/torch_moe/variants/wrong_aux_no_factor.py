# expect: a term dropped from a sum, or a factor from a product
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
        weights, chosen = probs.topk(self.top_k, dim=-1)
        weights = weights / weights.sum(dim=-1, keepdim=True)
        y = torch.zeros_like(x)
        for e, expert in enumerate(self.experts):
            b, t, slot = torch.where(chosen == e)
            y[b, t] += weights[b, t, slot, None] * expert(x[b, t])
        f = F.one_hot(chosen, self.num_experts).to(x.dtype).sum(dim=-2).mean(dim=(0, 1))
        P = probs.mean(dim=(0, 1))
        return y, (f * P).sum()
