"""torch's meta kernels without torch._dynamo: the device check's cold cost.

The device check runs the user's code on the meta device. torch runs many meta kernels in Python
(torch._refs, torch._meta_registrations), each wrapped by torch._disable_dynamo, whose first call
imports torch._dynamo (about 0.8 s of the 1.1 s a fresh process paid for its first meta call) only
to mark the kernel "never traced by torch.compile", and caches the marked kernel on the kernel
itself. Nothing in a check is compiled, so the marked kernel is the kernel: set ahead, the same
kernel runs and raises the same errors, and torch._dynamo is never imported. What is left is
torch.fx.experimental.symbolic_shapes (sympy, about 0.3 s), which torch._check imports.
"""

from __future__ import annotations

import gc
import types


def without_dynamo() -> int:
    """Mark every meta kernel wrapped so far as its own dynamo-disabled self; returns how many were marked.
    Where torch is built otherwise (no such wrapper), nothing is marked and the first meta call imports
    torch._dynamo as before."""
    try:
        import torch._compile

        inner = next(c for c in torch._compile._disable_dynamo.__code__.co_consts
                     if isinstance(c, types.CodeType) and c.co_name == "inner")
        at = inner.co_freevars.index("fn")
    except Exception:  # noqa: BLE001 - another torch: its kernels import torch._dynamo themselves
        return 0
    marked = 0
    for obj in gc.get_objects():  # about 40 ms: the wrappers are closures, held by many tables
        if type(obj) is types.FunctionType and obj.__code__ is inner:
            kernel = obj.__closure__[at].cell_contents
            if getattr(kernel, "__dynamo_disable", None) is None:
                try:
                    kernel.__dynamo_disable = kernel
                except (AttributeError, TypeError):  # a kernel that takes no attribute: left as it is
                    continue
                marked += 1
    return marked
