# expect: softmax runs over the tokens
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
        h = x.view(-1, D)
        router_logits = self.gate(h)  # (N, E)
        probs = F.softmax(router_logits, dim=0)
        weights, chosen = torch.topk(probs, self.top_k, dim=1)
        weights = weights / weights.sum(dim=1, keepdim=True)
        out = torch.zeros_like(h)
        for e in range(self.num_experts):
            idx, slot = torch.where(chosen == e)
            out = out.index_add(0, idx, weights[idx, slot].unsqueeze(1) * self.experts[e](h[idx]))
        f = F.one_hot(chosen, self.num_experts).to(x.dtype).sum(1).mean(0)
        return out.view(B, T, D), self.num_experts * (f * probs.mean(0)).sum()
