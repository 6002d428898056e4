# expect: the two operands swapped
"""The minus sign of the negative log-likelihood lost."""

import torch
from torch import Tensor


def cross_entropy(logits: Tensor, target: Tensor, ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
    """Mean cross-entropy over the positions whose target is not ignore_index; NaN if there are none."""
    # 1) stable log-probabilities over the class axis: x - logsumexp(x) never overflows
    log_p = logits - torch.logsumexp(logits, dim=-1, keepdim=True)  # (..., C)
    # 2) the positions that count; ignored ones read class 0 (any valid index) and are masked below
    keep = target != ignore_index  # (...)
    nll = log_p.gather(-1, (target * keep).unsqueeze(-1)).squeeze(-1)  # (..., 1) -> (...)
    smooth = log_p.mean(dim=-1)  # (...) the uniform part: mean over ALL C classes
    loss = (1 - label_smoothing) * nll + label_smoothing * smooth  # (...)
    # 3) mean over the kept positions: 0 / 0 = NaN when every position is ignored
    return loss.masked_fill(~keep, 0.0).sum() / keep.sum()
