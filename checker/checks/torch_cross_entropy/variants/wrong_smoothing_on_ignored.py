# expect: still counts the ignored positions
import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    log_p = torch.log_softmax(logits, dim=-1)
    keep = target != ignore_index
    nll = -log_p.gather(-1, target.masked_fill(~keep, 0).unsqueeze(-1)).squeeze(-1)
    nll_loss = nll.masked_fill(~keep, 0.0).sum()
    smooth_loss = -log_p.mean(-1).sum()  # forgot to mask this one
    return ((1 - label_smoothing) * nll_loss + label_smoothing * smooth_loss) / keep.sum()
