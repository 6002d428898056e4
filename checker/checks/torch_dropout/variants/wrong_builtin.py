# expect: off limits
import torch.nn.functional as F


def dropout(x, p=0.5, training=True, generator=None):
    return F.dropout(x, p, training)
