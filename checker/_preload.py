"""What the forkserver (macOS's start method) imports once: each check then forks a child with torch ready."""

import psutil  # noqa: F401 - the children watch the checker through it
import torch

from checker import processes, sandbox  # noqa: F401 - imported for the children
from checker.checks import rules  # noqa: F401

torch.set_num_threads(1)
sandbox.warm()
