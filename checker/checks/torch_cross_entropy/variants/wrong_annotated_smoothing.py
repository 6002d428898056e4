# expect: the Annotated Transformer's LabelSmoothing
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    # the Annotated Transformer: confidence on the target, smoothing / (size - 1) on every other class
    C = logits.shape[-1]
    log_p = torch.log_softmax(logits, dim=-1)
    keep = target != ignore_index
    true_dist = torch.full_like(log_p, label_smoothing / (C - 1))
    true_dist = true_dist.scatter(-1, torch.where(keep, target, 0).unsqueeze(-1), 1 - label_smoothing)
    loss = -(true_dist * log_p).sum(-1)
    return loss[keep].mean()
