"""The user's nn.Module in the child: the reference's weights loaded by name, and the methods of nn.Module that a
class of the user's file hides with parameters nn.Module's own calls cannot bind."""


def load_state(module, state: dict) -> None:
    """Load the reference's weights into the user's module by name, strictly, keeping the module's own
    batch counters the reference has no use for (torch's BatchNorm keeps num_batches_tracked, and code
    written after it may too)."""
    own = {k: v for k, v in module.state_dict().items() if k.endswith("num_batches_tracked") and k not in state}
    module.load_state_dict({**state, **own}, strict=True)


def shadowed(cls, home: str) -> list[dict]:
    """The methods of nn.Module that a class of the user's file (module `home`) defines again with parameters
    nn.Module's own calls cannot bind: a helper named `_apply(lin, x)` hides the `_apply(fn)` that .to(),
    .double() and .cuda() call, so moving the module raises. An override that takes what the original takes
    (train(self, mode=True) calling super) is the user's right."""
    import inspect

    import torch

    found = []
    for klass in cls.__mro__:
        if klass.__module__ != home:
            continue
        for name, mine in vars(klass).items():
            theirs = vars(torch.nn.Module).get(name)
            if name in ("__init__", "forward") or not inspect.isfunction(theirs) or not callable(mine):
                continue
            function = getattr(mine, "__func__", mine)
            try:
                want = list(inspect.signature(theirs).parameters.values())[1:]
                got = inspect.signature(function)
                if not isinstance(mine, staticmethod):
                    got = got.replace(parameters=list(got.parameters.values())[1:])
            except (TypeError, ValueError):
                continue
            required = [object() for p in want if p.default is p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
            optional = [object() for p in want if p.default is not p.empty and p.kind is p.POSITIONAL_OR_KEYWORD]
            try:  # nn.Module calls its own methods with what they require, and some with more (eval: train(False))
                got.bind(*required)
                got.bind(*required, *optional)
            except TypeError:
                found.append({"name": name, "line": _def_line(function),
                              "got": [p for p in got.parameters], "want": [p.name for p in want]})
    return found


def _def_line(function) -> int:
    """The line of a function's `def`, below its decorators (co_firstlineno is the first decorator's)."""
    import inspect

    try:
        lines, first = inspect.getsourcelines(function)
    except (OSError, TypeError):
        return function.__code__.co_firstlineno
    return first + next((i for i, line in enumerate(lines) if line.lstrip().startswith(("def ", "async def "))), 0)
