"""One module instance called twice: what the second call gives after the first (a module must keep no
state between calls: a mask, a table or a cache built for the first input's length and stored on self)."""

from checker.sandbox.modules import load_state


def second_call(user, target: str, init: dict, state: dict, first: tuple, second: tuple):
    module = getattr(user, target)(**init).double()
    if state is not None:  # a module without weights of its own (a positional table) has none to load
        load_state(module, state)
    module.eval()
    module(*first)
    return module(*second)


def same_object_twice(user, target: str, first: tuple, second: tuple):
    """A function called twice in a row on one model or optimizer (the same object in first and second: pickled in
    one request, it arrives as one object): what the second call gives. {"first": the error of the first call},
    when that one raised: then nothing is said about the second."""
    fn = getattr(user, target)
    try:
        fn(*first)
    except NotImplementedError:
        raise  # a stub: not started, here as everywhere
    except Exception as err:  # noqa: BLE001 - the first call's own inputs: the other checks judge them
        return {"first": f"{type(err).__name__}: {err}"}
    return {"value": fn(*second)}


def seeded_calls(user, target: str, inits: list, state: dict | None, args: tuple) -> list:
    """The module built with each init, the same weights loaded, called on args in training mode after the same seed:
    what each call gives. A rate written into the code gives the same result whatever rate the init passes."""
    import torch

    out = []
    for init in inits:
        module = getattr(user, target)(**init).double()
        if state is not None:
            load_state(module, state)
        module.train()
        torch.manual_seed(0)
        out.append(module(*args))
    return out
