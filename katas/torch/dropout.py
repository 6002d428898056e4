"""Inverted dropout by hand, the function torch.nn.functional.dropout computes.

Shape legend:
    ...  any axes: (B, T, D), (N, D), (B, H, T, T) attention weights, ...

Implement dropout(x, p=0.5, training=True, generator=None):

    training:    keep_i ~ Bernoulli(1 - p), independently for EVERY element of x
                 y_i    = x_i * keep_i / (1 - p)          (inverted dropout: E[y_i] = x_i)
    evaluation:  y = x                                     (nothing is scaled at test time)

Arguments:
    x          (...) float tensor (float64 or float32), on any device
    p          float in [0, 1], the probability of ZEROING an element (as nn.Dropout's p)
    training   bool; False: return x unchanged in value (x itself is fine)
    generator  torch.Generator or None; draw the mask with it (torch.rand(..., generator=generator),
               torch.bernoulli(..., generator=generator)), so the same seed gives the same mask.
               None: the global random state.
returns (...) tensor of x's shape, dtype and device. p = 0 gives x (even in training), p = 1 gives
zeros (never NaN from 0 / 0, never ZeroDivisionError); gradients flow through the kept elements
(d y_i / d x_i = keep_i / (1 - p)). p outside [0, 1] raises ValueError, as F.dropout does.
The mask is made on x's device (device=x.device, or torch.full_like / torch.rand_like).

Rules: do not modify x (no in-place ops on it).
Off limits: torch.nn.functional.dropout, torch.nn.Dropout, torch.dropout, torch.native_dropout,
torch.nn.functional.alpha_dropout.
"""

import torch
from torch import Tensor


def dropout(x: Tensor, p: float = 0.5, training: bool = True, generator: torch.Generator | None = None) -> Tensor:
    raise NotImplementedError("write dropout: a Bernoulli(1 - p) mask, survivors scaled by 1 / (1 - p); eval is the identity")
