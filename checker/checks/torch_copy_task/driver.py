"""Runs in the child: the user's train_step called twice in a row on a model with no gradients yet, and the
order of its optimizer and backward calls.

That is a training loop as it starts from a fresh model, where clearing the gradients after
optimizer.step() (the Annotated Transformer's order) is equivalent to clearing them before
backward(); train_step_once (checker.checks.child.transformer) plants stale gradients, where it is not.
"""

import torch

from checker.checks.child.transformer import SGD


def train_step_twice(user, model, batch, pad_id, lr):
    """Two calls of user.train_step with one SGD optimizer, starting from .grad = None everywhere.

    Returns both losses it returned and every parameter after the second call.
    """
    optimizer = SGD(model.parameters(), lr=lr)
    for p in model.parameters():
        p.grad = None
    losses = [user.train_step(model, optimizer, *batch, pad_id) for _ in range(2)]
    return {"losses": losses, "params": {n: p.detach().clone() for n, p in model.named_parameters()}}


def train_step_order(user, model, batch, pad_id, lr):
    """The order in which one call of user.train_step runs optimizer.zero_grad(), backward and optimizer.step().

    Returns the events ("zero_grad", "backward", "step") as they happened, also when train_step raised.
    """
    optimizer = SGD(model.parameters(), lr=lr)
    for p in model.parameters():
        p.grad = torch.zeros_like(p)  # a step before backward has something to apply, as in a training loop
    events = []

    def recorded(name, method):
        def call(*args, **kwargs):
            events.append(name)
            return method(*args, **kwargs)
        return call

    optimizer.zero_grad, optimizer.step = recorded("zero_grad", optimizer.zero_grad), recorded("step", optimizer.step)
    backward = torch.autograd.backward  # loss.backward() calls it too
    torch.autograd.backward = recorded("backward", backward)
    try:
        user.train_step(model, optimizer, *batch, pad_id)
    except Exception:  # noqa: BLE001 - the order up to the error is what this driver reports
        pass
    finally:
        torch.autograd.backward = backward
    return events
