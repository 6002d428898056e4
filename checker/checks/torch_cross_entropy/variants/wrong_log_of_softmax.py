# expect: softmax is stable, but a probability below 1e-308
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = logits.softmax(-1).log()
    keep = target != ignore_index
    nll = -log_p[keep].gather(-1, target[keep].unsqueeze(-1)).squeeze(-1)
    smooth = -log_p[keep].mean(-1)
    return ((1 - label_smoothing) * nll + label_smoothing * smooth).mean()
