"""A top-k mixture-of-experts layer (Mixtral style), from scratch.

Shape legend:
    B     batch size
    T     sequence length
    D     d_model
    d_ff  hidden size of each expert
    E     num_experts
    k     top_k, the experts each token is sent to (1 <= k <= E)
    N     = B · T tokens

Implement MoE (Shazeer et al. 2017; Switch Transformer, Fedus et al. 2021; Mixtral, Jiang et al. 2024):

    probs    = softmax(gate(x)) over the E experts               the router
    weights, chosen = top-k of probs                              k experts per token
    weights  = weights / weights.sum()                            renormalised over the chosen k
    y        = Σ_j weights_j · experts[chosen_j](x)               per token

Equivalently (Mixtral's own code): top-k of the LOGITS, then a softmax over those k only; both give
the same weights. Each token must run ONLY through its k experts: call expert e once (or more) on
the tokens routed to it, never on every token (a dense mixture with zero weights gives the same
numbers and costs E/k times the compute; the checker counts the tokens each expert receives).
Ties: select exactly k experts per token (torch.topk), whatever the ties.

The load-balancing auxiliary loss (Switch Transformer eq. 4, with HF Mixtral's top-k counting):

    f_i = (number of tokens routed to expert i) / N      each token counts for each of its k experts
    P_i = mean over the N tokens of probs[:, i]          the full softmax, before top-k
    aux_loss = E · Σ_i f_i · P_i

Σ f_i = k, so a perfectly balanced router gives aux_loss = k (1 with k = 1, Switch's own case); the
gradient reaches the router through P only (f is a count).

Given: Expert, Mixtral's SwiGLU expert (w2(silu(w1(x)) * w3(x))): use it as is.

__init__(d_model, d_ff, num_experts, top_k=2):
    gate     nn.Linear(d_model, num_experts, bias=False)     the router (Mixtral's name)
    experts  nn.ModuleList of num_experts Expert(d_model, d_ff)
    (the checker loads weights into gate.weight and experts.{i}.w1/w2/w3.weight by these names, and
    counts the tokens each expert receives by hooking self.experts[i]: call the experts as modules)
forward(x):
    x        (B, T, D) float tensor
    returns  (y, aux_loss): y (B, T, D) of x's dtype; aux_loss a () scalar tensor of x's dtype

Rules: do not modify x.
Off limits: transformers (its MixtralSparseMoeBlock and load_balancing_loss_func).
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
    def __init__(self, d_model: int, d_ff: int, num_experts: int, top_k: int = 2):
        super().__init__()
        self.num_experts, self.top_k = num_experts, top_k
        raise NotImplementedError("create gate (d_model -> num_experts, no bias) and the ModuleList experts")

    def forward(self, x: Tensor) -> tuple[Tensor, Tensor]:
        raise NotImplementedError("write MoE.forward: route, top-k, renormalise, run each expert on its tokens, aux loss")
