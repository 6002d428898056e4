# expect: off limits
"""Lets torch autograd do the work."""
import torch


def layer_norm_backward(dy, x, gamma, eps=1e-5):
    xt = torch.from_numpy(x).requires_grad_(True)
    gt = torch.from_numpy(gamma).requires_grad_(True)
    bt = torch.zeros_like(gt, requires_grad=True)
    y = torch.nn.functional.layer_norm(xt, (x.shape[-1],), gt, bt, eps)
    (y * torch.from_numpy(dy)).sum().backward()
    return xt.grad.numpy(), gt.grad.numpy(), bt.grad.numpy()
