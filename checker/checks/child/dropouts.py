"""What the dropout-placement checks hand to or run in the child: a sublayer that ignores its input, and
a layer run in training mode with only its own dropouts on.

Dropout in the wrong place (on x, on a residual sum, on a sublayer's input, after a norm) changes the
training-mode result in a way these make visible. Like every driver they return plain values.
"""

import torch
from torch import nn

from checker.sandbox.modules import load_state


class Constant(nn.Module):
    """A sublayer that ignores its input and returns a fixed tensor of its shape: dropout on the sublayer's
    input then changes nothing, dropout on its output still acts."""

    def __init__(self, value: torch.Tensor):
        super().__init__()
        self.register_buffer("value", value.detach().clone())

    def forward(self, x):
        return self.value.to(x.dtype).expand_as(x).clone()


def train_own_dropouts(user, target: str, init: dict, state: dict, args: tuple, given: tuple):
    """The user's module in training mode with the dropouts inside the given blocks (the names in given)
    silenced, so the only randomness left is the module's own dropout. Returns the first output."""
    module = getattr(user, target)(**init).double()
    load_state(module, state)
    for name in given:
        try:
            sub = module.get_submodule(name)
        except AttributeError:
            continue
        if isinstance(sub, nn.Dropout):
            sub.p = 0.0
    module.train()
    torch.manual_seed(0)
    with torch.no_grad():
        value = module(*args)
    return value[0] if isinstance(value, (tuple, list)) else value


def dropout_rates(user, target: str, init: dict) -> dict:
    """{name: p} of every nn.Dropout inside target(**init): whether the model's rate reached each one."""
    module = getattr(user, target)(**init)
    return {name: sub.p for name, sub in module.named_modules() if isinstance(sub, nn.Dropout)}
