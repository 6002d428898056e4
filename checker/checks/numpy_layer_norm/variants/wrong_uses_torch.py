# expect: which is off limits in this kata
"""Hands the work to PyTorch: correct values, but this is the NumPy track."""
import torch
import torch.nn.functional as F


def layer_norm(x, gamma, beta, epsilon=1e-6):
    out = F.layer_norm(torch.from_numpy(x), x.shape[-1:], torch.from_numpy(gamma), torch.from_numpy(beta), epsilon)
    return out.numpy()
