"""Driver for the vocab kata, run in the child (see sandbox.child._drive).

build_vocab returns idx2word = {index: word}: a dict with int keys, which the sandbox cannot
carry back (only str-keyed dicts travel). This driver calls the user's build_vocab in the child
and turns every dict into a plain list of [key, value] pairs, keeping the key types.
"""


def _plain(value):
    if isinstance(value, dict):
        return {"dict": [[_plain(k), _plain(v)] for k, v in value.items()], "type": type(value).__name__}
    if isinstance(value, (tuple, list)):
        return type(value)(_plain(v) for v in value)
    return value


def build_vocab(user, tokenized, min_freq=None):
    """The user's build_vocab(tokenized[, min_freq]) in plain form; min_freq=None uses their default."""
    value = user.build_vocab(tokenized) if min_freq is None else user.build_vocab(tokenized, min_freq)
    return _plain(value)
