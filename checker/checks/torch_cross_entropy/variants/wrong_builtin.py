# expect: off limits
import torch.nn.functional as F


def cross_entropy(logits, target, ignore_index=-100, label_smoothing=0.0):
    C = logits.shape[-1]
    return F.cross_entropy(logits.reshape(-1, C), target.reshape(-1), ignore_index=ignore_index,
                           label_smoothing=label_smoothing)
