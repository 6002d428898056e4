"""What the forkserver (macOS's start method) imports once: each check then forks a child with torch ready."""

try:
    import psutil  # noqa: F401 - the children watch the checker through it
    import torch

    from checker.sandbox import child, parent, processes, rules  # noqa: F401 - imported for the children
except Exception:  # noqa: BLE001 - a dependency that fails to import (a DLL, a NumPy for another ABI): the
    pass  # checker imports it too and says so with the install line; the server prints no traceback beside it
else:
    torch.set_num_threads(1)
    child.warm()
