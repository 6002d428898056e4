import torch


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    C = logits.shape[-1]
    x, t = logits.reshape(-1, C), target.reshape(-1)  # (N, C), (N,)
    lse = torch.logsumexp(x, dim=1)  # (N,)
    keep = t != ignore_index
    rows = torch.arange(x.shape[0], device=x.device)
    nll = lse - x[rows, torch.where(keep, t, torch.zeros_like(t))]  # -log p[target]
    smooth = lse - x.mean(dim=1)  # mean over classes of -log p
    loss = (1 - label_smoothing) * nll + label_smoothing * smooth
    return torch.where(keep, loss, torch.zeros_like(loss)).sum() / keep.sum()
