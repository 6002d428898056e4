# expect: a term dropped from a sum, or a factor from a product
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = torch.log_softmax(logits, dim=-1)
    keep = target != ignore_index
    log_p, t = log_p[keep], target[keep]
    nll = -log_p.gather(-1, t.unsqueeze(-1)).squeeze(-1)
    return ((1 - label_smoothing) * nll - label_smoothing * log_p.mean(-1)).sum()
