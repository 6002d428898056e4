# expect: exp of a logit above 709
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    probs = torch.exp(logits) / torch.exp(logits).sum(-1, keepdim=True)
    log_p = torch.log(probs)
    keep = target != ignore_index
    nll = -log_p[keep].gather(-1, target[keep].unsqueeze(-1)).squeeze(-1)
    smooth = -log_p[keep].mean(-1)
    return ((1 - label_smoothing) * nll + label_smoothing * smooth).mean()
