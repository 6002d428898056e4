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
        self.experts = nn.ModuleList(Expert(d_model, d_ff) for _ in range(num_experts))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        shape = x.shape
        x = x.view(-1, shape[-1])                              # (N, D)
        logits = self.gate(x)                                  # (N, E)
        top_logits, top_idx = torch.topk(logits, self.top_k, dim=-1)
        top_w = F.softmax(top_logits, dim=-1)                  # softmax over the k chosen (Mistral's code)
        out = torch.zeros_like(x)
        for slot in range(self.top_k):
            for e in range(self.num_experts):
                sel = top_idx[:, slot] == e
                if sel.any():
                    out[sel] = out[sel] + top_w[sel, slot, None] * self.experts[e](x[sel])
        probs = logits.softmax(dim=-1)
        one_hot = F.one_hot(top_idx, self.num_experts).to(x.dtype)   # (N, k, E)
        f = one_hot.sum(dim=(0, 1)) / x.shape[0]
        aux = self.num_experts * torch.dot(f, probs.mean(0))
        return out.view(shape), aux
