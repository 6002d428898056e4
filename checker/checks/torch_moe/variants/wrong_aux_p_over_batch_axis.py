# expect: the axis a reduction, softmax, cumsum or concatenation runs over
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
    def __init__(self, d_model: int, d_ff: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d_model, num_experts, bias=False)
        self.experts = nn.ModuleList([Expert(d_model, d_ff) for _ in range(num_experts)])

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        B, T, D = x.shape
        h = x.reshape(-1, D)                                   # (N, D)
        probs3 = F.softmax(self.gate(x), dim=-1)               # (B, T, E)
        probs = probs3.reshape(-1, self.num_experts)
        w, idx = probs.topk(self.top_k, dim=-1)                # (N, k)
        w = w / w.sum(dim=-1, keepdim=True)
        y = torch.zeros_like(h)
        for e, expert in enumerate(self.experts):
            hit = idx == e                                     # (N, k)
            tokens = hit.any(dim=-1).nonzero(as_tuple=True)[0]
            if tokens.numel() == 0:
                continue
            weight = (w * hit).sum(dim=-1)[tokens]             # (n,)
            y[tokens] += weight[:, None] * expert(h[tokens])
        counts = torch.bincount(idx.flatten(), minlength=self.num_experts).to(x.dtype)
        f = counts / h.shape[0]
        P = probs3.mean(dim=0)
        aux = self.num_experts * (f * P).sum()
        return y.view(B, T, D), aux
