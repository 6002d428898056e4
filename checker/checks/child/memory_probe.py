"""Runs in the child: the user's flash_attention under a memory probe (see Kit.drive).

The probe is a TorchDispatchMode: every ATen operation the user's code runs passes through it,
below autograd, so torch.no_grad(), torch.inference_mode(), einsum, indexing, in-place ops,
`out=` arguments and factory functions (torch.zeros, torch.arange, torch.tensor) are all seen.
For every tensor an operation returns it records the size of the STORAGE behind it, in
elements: a view (transpose, slice, expand, as_strided) costs what its base costs, so
expanding a (T_q, 1) tensor to (T_q, T_k) is free, while a matmul into a (T_q, T_k) result,
or a buffer allocated to receive one, is counted. Drivers never judge: the parent compares the
largest size with the kata's bound.

The probe does not touch Python-level functions, so the sandbox's traps on forbidden calls
(checker/sandbox/rules.py) still record a call made during the probed run.
"""

# Fused attention kernels: one ATen op whose intermediates the probe cannot see.
FUSED = ("scaled_dot_product", "flash_attention", "efficient_attention", "_fused_sdp", "multi_head_attention")


def flash_attention_memory(user, q, k, v, causal, block_size):
    """The user's output and the largest tensor storage (elements) any op created during the call.

    Returns {"out", "largest", "op", "shape", "fused", "row"}: op and shape name the operation that
    made the largest storage (the shape of the tensor it returned), fused lists fused-attention
    ops that ran, and row is [op, shape] of the first new float tensor with an axis as long as
    T_k and none as long as d_k or d_v (a row of scores over every key, not a K or V copy), or
    None. The parent picks sizes that make this test exact (T_k unlike every other size).
    """
    T_k, widths = k.shape[-2], (k.shape[-1], v.shape[-1])
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Probe(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls):
            # By default the mode wraps __torch_dispatch__ in torch._disable_dynamo, whose first call
            # imports torch._dynamo (~1 s). Nothing here is compiled, so there is nothing to skip.
            return False

        def __init__(self):
            super().__init__()
            self.largest, self.op, self.shape, self.fused, self.row = 0, "", [], [], None

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            out = func(*args, **(kwargs or {}))
            name = str(func.overloadpacket)
            if any(word in name for word in FUSED) and name not in self.fused:
                self.fused.append(name)
            for t in tree_flatten(out)[0]:
                if isinstance(t, torch.Tensor):
                    n = _storage_elements(t)
                    if n > self.largest:
                        self.largest, self.op, self.shape = n, name, list(t.shape)
                    if (self.row is None and t.is_floating_point() and not t._is_view() and T_k in t.shape
                            and not any(w in t.shape for w in widths)):
                        self.row = [name, list(t.shape)]
            return out

    probe = Probe()
    with probe:
        out = user.flash_attention(q, k, v, causal, block_size)
    return {"out": out, "largest": probe.largest, "op": probe.op, "shape": probe.shape, "fused": probe.fused,
            "row": probe.row}


def _storage_elements(t) -> int:
    """Elements of the memory behind t (its base's, for a view); numel when storage is unreadable."""
    try:
        return t.untyped_storage().nbytes() // max(1, t.element_size())
    except (RuntimeError, NotImplementedError):  # tensors without storage (e.g. some subclasses)
        return t.numel()
