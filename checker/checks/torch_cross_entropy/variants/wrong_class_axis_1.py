# expect: the axis a reduction, softmax, cumsum or concatenation runs over
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = torch.log_softmax(logits, dim=1)  # classes on axis 1, as F.cross_entropy wants them
    keep = target != ignore_index
    nll = -log_p.gather(-1, (target * keep).unsqueeze(-1)).squeeze(-1)
    loss = (1 - label_smoothing) * nll - label_smoothing * log_p.mean(-1)
    return (loss * keep).sum() / keep.sum()
