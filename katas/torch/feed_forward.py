"""Position-wise feed-forward network.

Shape legend:
    ...   any leading axes: (B, T), (T,), ...
    D     d_model
    d_ff  hidden size of the network (typically 4 * d_model)

Implement FeedForward (the interview tutorial):

    FFN(x) = fc2(dropout(act(fc1(x))))

the same two-layer network applied to every position on its own.

__init__(d_model, d_ff, dropout=0.0, activation="relu"):
    fc1      nn.Linear(d_model, d_ff)   expands: weight (d_ff, D), bias (d_ff,)
    fc2      nn.Linear(d_ff, d_model)   projects back: weight (D, d_ff), bias (D,)
    dropout  nn.Dropout(dropout), between the activation and fc2
    act      "relu": ReLU; "gelu": the exact GELU, x * Φ(x) = 0.5 x (1 + erf(x / √2)),
             as nn.GELU() (not the tanh approximation)
    any other activation raises ValueError when the module is built.
    (the checker loads weights into fc1 and fc2 by these names)
forward(x):
    x        (..., D) float tensor
    returns  (..., D), same dtype as x

Rules: work in the dtype of the input; do not modify x.
"""

import math

import torch
from torch import Tensor, nn


class FeedForward(nn.Module):
    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        raise NotImplementedError("create fc1, fc2, the dropout and the activation (ValueError if unknown)")

    def forward(self, x: Tensor) -> Tensor:
        raise NotImplementedError("write the body of FeedForward.forward")
