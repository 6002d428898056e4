"""One module instance called twice: what the second call gives after the first (a module must keep no
state between calls: a mask, a table or a cache built for the first input's length and stored on self)."""

from checker.checks.child import load_state


def second_call(user, target: str, init: dict, state: dict, first: tuple, second: tuple):
    module = getattr(user, target)(**init).double()
    load_state(module, state)
    module.eval()
    module(*first)
    return module(*second)
