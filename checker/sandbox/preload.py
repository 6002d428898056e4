"""What the forkserver (macOS's start method) imports once: each check then forks a child with torch ready.

The server lets go of kata's console first. A child it forks for a kata that exits meanwhile (a dependency that fails
to import, Ctrl-C) finds its parent gone and prints multiprocessing's traceback ("EOFError: Ran out of input") to the
stderr it inherits from the server: kata's own, beside kata's message.
"""

try:
    from checker.sandbox import processes

    processes.let_go_of_the_console()
    import torch

    from checker.sandbox import child, parent, rules  # noqa: F401 - imported for the children
except Exception:  # noqa: BLE001 - a dependency that fails to import (a DLL, a NumPy for another ABI): the
    pass  # checker imports it too and says so with the install line; the server prints no traceback beside it
else:
    torch.set_num_threads(1)
    child.warm()
