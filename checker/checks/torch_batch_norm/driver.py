"""Runs in the child: the user's BatchNorm trained for a few steps, then evaluated.

Drivers never judge: they return what the user's code did, the parent compares (see Kit.drive).
The parent runs the same driver on the reference and on its named mistakes, with a namespace
holding their class.
"""

import torch

from checker.sandbox.modules import load_state


def batch_norm_run(user, init, state, batches, cotangent, eval_x):
    """Train mode on every batch in turn, then eval mode on eval_x; a flat dict of what happened.

    Keys: y{s}, running_mean{s}, running_var{s} after training step s; grad_x, grad_weight, grad_bias
    of sum(y0 * cotangent); graph: whether a running statistic holds an autograd graph; eval: the
    output in eval mode; running_mean_after_eval / running_var_after_eval.
    """
    module = user.BatchNorm(**init).to(eval_x.dtype)
    load_state(module, state)
    module.train()
    out, graph = {}, False
    for s, batch in enumerate(batches):
        x = batch.detach().clone().requires_grad_(s == 0)
        y = module(x)
        if s == 0:
            (y * cotangent).sum().backward()
            out["grad_x"], out["grad_weight"], out["grad_bias"] = x.grad, module.weight.grad, module.bias.grad
        buffers = dict(module.named_buffers())
        rm, rv = buffers.get("running_mean"), buffers.get("running_var")
        graph = graph or any(isinstance(b, torch.Tensor) and b.requires_grad for b in (rm, rv))
        out[f"y{s}"] = y.detach()
        out[f"running_mean{s}"] = None if rm is None else rm.detach().clone()
        out[f"running_var{s}"] = None if rv is None else rv.detach().clone()
    module.eval()
    with torch.no_grad():
        out["eval"] = module(eval_x)
    buffers = dict(module.named_buffers())
    out["running_mean_after_eval"] = buffers["running_mean"].detach().clone() if "running_mean" in buffers else None
    out["running_var_after_eval"] = buffers["running_var"].detach().clone() if "running_var" in buffers else None
    out["graph"] = graph
    return out
