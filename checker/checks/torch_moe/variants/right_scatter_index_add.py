import torch
import torch.nn.functional as F
from torch import Tensor, nn


class Expert(nn.Module):
    """Given: Mixtral's expert, a SwiGLU feed-forward network without biases."""

    def __init__(self, d_model: int, d_ff: int):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)  # gate branch
        self.w2 = nn.Linear(d_ff, d_model, bias=False)  # down projection
        self.w3 = nn.Linear(d_model, d_ff, bias=False)  # up branch

    def forward(self, x: Tensor) -> Tensor:
        return self.w2(F.silu(self.w1(x)) * self.w3(x))  # (n, D) -> (n, d_ff) -> (n, D)


class MoE(nn.Module):
    """A dense (N, E) routing matrix by scatter, then index_add per expert on its non-zero rows."""

    def __init__(self, d_model: int, d_ff: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d_model, d_ff) for _ in range(num_experts)])

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        B, T, D = x.shape
        flat = x.reshape(B * T, D)
        probs = torch.softmax(self.gate(flat), dim=-1)                      # (N, E)
        topv, topi = probs.topk(self.top_k, dim=-1)
        route = torch.zeros_like(probs).scatter(1, topi, topv / topv.sum(-1, keepdim=True))  # (N, E)
        out = torch.zeros_like(flat)
        for e in range(self.num_experts):
            rows = torch.nonzero(torch.zeros_like(probs, dtype=torch.bool).scatter(1, topi, True)[:, e]).squeeze(1)
            if rows.numel():
                out.index_add_(0, rows, route[rows, e, None] * self.experts[e](flat[rows]))
        chosen = torch.zeros_like(probs).scatter(1, topi, 1.0)
        aux = self.num_experts * (chosen.mean(0) * probs.mean(0)).sum()
        return out.view(B, T, D), aux
