"""What the forkserver (macOS's start method) imports once: each check then forks a child with torch ready."""

import torch

from checker import processes, rules, sandbox  # noqa: F401 - imported for the children

torch.set_num_threads(1)
sandbox.warm()
