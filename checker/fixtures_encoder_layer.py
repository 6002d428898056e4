"""Driver for the encoder_layer checks, run in the child (see sandbox._drive).

It builds the user's layer with dropout > 0, loads the given weights, silences the dropouts inside
the GIVEN building blocks (self_attn.dropout, ffn.dropout), and runs one forward pass in training
mode, so the only randomness left is the layer's own dropout on the sublayer outputs.
"""

from torch import nn

GIVEN_DROPOUTS = ("self_attn.dropout", "ffn.dropout")


def train_forward(user, target, init, state, x, mask):
    module = getattr(user, target)(**init).to(x.dtype)
    module.load_state_dict(state, strict=True)
    for name in GIVEN_DROPOUTS:
        try:
            sub = module.get_submodule(name)
        except AttributeError:
            continue
        if isinstance(sub, nn.Dropout):
            sub.p = 0.0
    module.train()
    value = module(x, mask)
    return value[0] if isinstance(value, (tuple, list)) else value
