# expect: your code modified its input
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = logits - torch.logsumexp(logits, dim=-1, keepdim=True)
    keep = target != ignore_index
    target[~keep] = 0  # make gather happy
    nll = -log_p.gather(-1, target.unsqueeze(-1)).squeeze(-1)
    loss = (1 - label_smoothing) * nll - label_smoothing * log_p.mean(-1)
    return loss[keep].mean()
