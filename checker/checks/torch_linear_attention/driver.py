"""Runs in the child: the user's linear_attention under a memory probe (see Kit.drive).

The same probe as checker/checks/child/memory_probe.py (a TorchDispatchMode that records, for every
tensor an ATen operation returns, the size of the storage behind it), around linear_attention.
Drivers never judge: the parent compares the largest size with the kata's bound.
"""

from checker.checks.child.memory_probe import FUSED, _storage_elements


def linear_attention_memory(user, q, k, v, causal):
    """The user's output and the largest tensor storage (elements) any op created during the call.

    Returns {"out", "largest", "op", "shape", "fused", "square"}: op and shape name the operation that
    made the largest storage, fused lists fused-attention ops that ran, and square is [op, shape] of
    the first new float tensor with an axis of T_q and another of T_k (a matrix of scores or
    weights), or None. The parent picks T_q and T_k unlike every other size.
    """
    T_q, T_k = q.shape[-2], k.shape[-2]
    import torch
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_flatten

    class Probe(TorchDispatchMode):
        @classmethod
        def _should_skip_dynamo(cls):
            return False  # nothing here is compiled: do not import torch._dynamo (~1 s)

        def __init__(self):
            super().__init__()
            self.largest, self.op, self.shape, self.fused, self.square = 0, "", [], [], None

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
                    shape = list(t.shape)
                    if self.square is None and not t._is_view() and T_q in shape and (
                            T_k in shape[shape.index(T_q) + 1:] or T_k in shape[:shape.index(T_q)]):
                        self.square = [name, shape]
            return out

    probe = Probe()
    with probe:
        out = user.linear_attention(q, k, v, causal)
    return {"out": out, "largest": probe.largest, "op": probe.op, "shape": probe.shape, "fused": probe.fused,
            "square": probe.square}
