"""Runs in the child: the user's train_step called twice in a row on a model with no gradients yet.

That is a training loop as it starts from a fresh model, where clearing the gradients after
optimizer.step() (the Annotated Transformer's order) is equivalent to clearing them before
backward(); train_step_once (checker.checks.child.transformer) plants stale gradients, where it is not.
"""

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
