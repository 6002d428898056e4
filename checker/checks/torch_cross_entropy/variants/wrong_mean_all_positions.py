# expect: divided by the number of ALL positions
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = torch.log_softmax(logits, dim=-1)
    mask = (target != ignore_index).to(logits.dtype)
    nll = -log_p.gather(-1, target.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    loss = (1 - label_smoothing) * nll - label_smoothing * log_p.mean(-1)
    return (loss * mask).mean()
