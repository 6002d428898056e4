"""A top-k mixture-of-experts layer, Mixtral style (reference answer).

Shape legend:
    B, T  batch and sequence; D d_model; d_ff each expert's hidden size
    E     num_experts; k top_k

softmax over the E router logits, top-k, weights renormalised over the k, each token through its k
experts only; aux = E · Σ_i f_i · P_i (Switch Transformer; f counted over the k choices, as HF Mixtral).
"""

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
    """Routes each token to its top-k experts and mixes their outputs by the renormalised router weights."""

    def __init__(self, d_model: int, d_ff: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        self.gate = nn.Linear(d_model, num_experts, bias=False)  # the router: (D,) -> (E,) logits
        self.experts = nn.ModuleList(Expert(d_model, d_ff) for _ in range(num_experts))

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        B, T, _ = x.shape
        # 1) route: softmax over the experts, keep the top k, renormalise their weights to sum to 1
        probs = self.gate(x).softmax(dim=-1)  # (B, T, D) -> (B, T, E)
        weights, chosen = probs.topk(self.top_k, dim=-1)  # (B, T, k), (B, T, k)
        weights = weights / weights.sum(dim=-1, keepdim=True)  # (B, T, k)
        # 2) dispatch: each expert runs on the tokens routed to it, and only those
        y = torch.zeros_like(x)  # (B, T, D)
        for e, expert in enumerate(self.experts):
            b, t, slot = torch.where(chosen == e)  # (n_e,) each: the tokens that chose e, and in which slot
            y[b, t] = y[b, t] + weights[b, t, slot, None] * expert(x[b, t])  # (n_e, 1) * (n_e, D)
        # 3) Switch's load-balancing loss: E · Σ_i (share of tokens sent to i) · (mean router probability of i)
        f = torch.bincount(chosen.flatten(), minlength=self.num_experts).to(x.dtype) / (B * T)  # (E,)
        P = probs.mean(dim=(0, 1))  # (B, T, E) -> (E,)
        return y, self.num_experts * (f * P).sum()  # (B, T, D), ()
