"""Cross-entropy loss with label smoothing and an ignore index, from scratch.

Shape legend:
    ...  any leading axes: (N,), (B, T), (B, H, T), ...
    C    number of classes (the vocabulary size for a language model)

Implement cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0), the loss that
F.cross_entropy computes, with one difference: the class axis is the LAST axis of logits (a
language model's (B, T, V)), not axis 1 as in F.cross_entropy (which wants (N, C) or (B, C, T)).

    log_p   = log_softmax(logits) over the last axis          (stable: x - logsumexp(x))
    nll     = -log_p[target]                                   per position
    smooth  = mean over ALL C classes of -log_p                per position
    loss    = (1 - label_smoothing) * nll + label_smoothing * smooth
    result  = mean of loss over the positions whose target != ignore_index

That is PyTorch's label smoothing (Szegedy et al. 2016, "Rethinking the Inception Architecture",
as used in "Attention Is All You Need" §5.4 with ε = 0.1): the target distribution is
(1 - ε) on the target class plus ε / C on EVERY class, the target class included.

Arguments:
    logits           (..., C) float tensor (float64 or float32), unnormalised scores
    target           (...) int64 class indices in [0, C), or ignore_index at positions to skip
    ignore_index     int, default -100 (the interview tutorial uses 0, its PAD id)
    label_smoothing  float ε in [0, 1], default 0.0
returns a scalar (0-dim) tensor of logits' dtype. If every position is ignored the mean is
0 / 0 = NaN, as F.cross_entropy returns. Logits of size 1e4 must give a finite loss.

Rules: do not modify logits or target. torch.logsumexp and F.log_softmax are allowed.
Off limits: torch.nn.functional.cross_entropy, torch.nn.functional.nll_loss,
torch.nn.CrossEntropyLoss, torch.nn.NLLLoss.
"""

import torch
from torch import Tensor


def cross_entropy(logits: Tensor, target: Tensor, ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
    raise NotImplementedError("write cross_entropy: log-probabilities, NLL and smoothing terms, masked mean")
