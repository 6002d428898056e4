"""A boolean routing mask per expert, the weights gathered from a scattered (N, E) matrix."""
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
        shape = x.shape
        h = x.flatten(0, 1)
        logits = self.gate(h)
        probs = logits.softmax(-1)
        vals, idx = torch.topk(probs, k=self.top_k, dim=-1, sorted=False)
        dense_w = torch.zeros_like(probs).scatter(1, idx, vals / vals.sum(-1, keepdim=True))  # (N, E)
        routed = dense_w > 0
        out = torch.zeros_like(h)
        for e in range(self.num_experts):
            token_ids = routed[:, e].nonzero(as_tuple=True)[0]
            if token_ids.numel() == 0:
                continue
            out[token_ids] = out[token_ids] + dense_w[token_ids, e:e + 1] * self.experts[e](h[token_ids])
        f = routed.to(x.dtype).sum(0) / h.shape[0]
        aux = self.num_experts * (f * probs.mean(0)).sum()
        return out.reshape(shape), aux
