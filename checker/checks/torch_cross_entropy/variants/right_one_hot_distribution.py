import torch
import torch.nn.functional as F


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    """The smoothed target distribution written out: (1 - ε)·one_hot + ε/C, then -Σ q log p."""
    keep = target != ignore_index
    x, t = logits[keep], target[keep]  # (n_kept, C), (n_kept,)
    C = x.shape[-1]
    q = (1 - label_smoothing) * F.one_hot(t, C).to(x.dtype) + label_smoothing / C
    return -(q * F.log_softmax(x, dim=-1)).sum(-1).mean()  # mean of nothing is NaN
