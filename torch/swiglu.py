"""SwiGLU feed-forward network (as in LLaMA), from scratch.

Shape legend:
    ...   any leading axes: (B, T), (T,), ...
    D     d_model
    d_ff  hidden size of the network (LLaMA: about 2/3 · 4 · D, rounded up to a multiple of 256)

Implement SwiGLU (Shazeer 2020, "GLU Variants Improve Transformer"; used by PaLM and LLaMA):

    SwiGLU(x) = W_down( silu(W_gate(x)) * W_up(x) )        silu(h) = h · sigmoid(h)

the gate branch goes through SiLU (Swish with beta = 1), the up branch stays linear, their
elementwise product is projected back to d_model. Applied to every position on its own.

__init__(d_model, d_ff, bias=False):
    W_gate  nn.Linear(d_model, d_ff, bias=bias)   the gated branch    (LLaMA's w1)
    W_up    nn.Linear(d_model, d_ff, bias=bias)   the linear branch   (LLaMA's w3)
    W_down  nn.Linear(d_ff, d_model, bias=bias)   projects back       (LLaMA's w2)
    bias=False (LLaMA has no biases): the Linears have no bias parameter at all.
    (the checker loads weights into W_gate, W_up, W_down by these names)
forward(x):
    x        (..., D) float tensor
    returns  (..., D), same dtype as x

Rules: work in the dtype of the input; do not modify x. torch.nn.functional.silu / nn.SiLU and
torch.sigmoid are allowed.
Off limits: torch.nn.functional.glu.
"""

import torch
import torch.nn.functional as F
from torch import Tensor, nn


class SwiGLU(nn.Module):
    def __init__(self, d_model: int, d_ff: int, bias: bool = False):
        super().__init__()
        raise NotImplementedError("create W_gate, W_up (d_model -> d_ff) and W_down (d_ff -> d_model)")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write the body of SwiGLU.forward")
