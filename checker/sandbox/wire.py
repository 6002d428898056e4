"""Values between the sandbox's child and the checker: a tree of plain values (no classes), unpickled with a loader
that refuses every global, so nothing the user's code does can reach the parent, the references or the comparisons."""

from __future__ import annotations

import io
import pickle
from dataclasses import dataclass

import numpy as np
import torch

# Largest value the child sends back whole; beyond this only its shape and dtype travel.
MAX_ELEMENTS = 20_000_000


@dataclass(frozen=True)
class Opaque:
    """A returned value that is neither a tensor, an array, a container nor a plain scalar."""

    type: str
    repr: str


# ----------------------------------------------------------------------------- encoding


def encode(value):
    """Turn a returned value into a tree of str/bytes/int/float/bool/None, lists and dicts."""
    if isinstance(value, np.generic) and value.dtype.kind in "biuf":  # before float: np.float64 subclasses it
        return {"@": "npscalar", "dtype": str(value.dtype), "value": value.item()}
    if value is None or type(value) in (bool, int, float, str):  # exact types: a subclass would unpickle as itself
        return value
    if isinstance(value, torch.Tensor):
        t = value.detach()
        if t.numel() > MAX_ELEMENTS:
            return {"@": "opaque", "type": f"torch.Tensor{tuple(t.shape)} {t.dtype}", "repr": "too large to compare"}
        wire = t.to("cpu").contiguous()
        if wire.dtype == torch.bfloat16:
            wire = wire.float()
        return {
            "@": "tensor", "dtype": str(t.dtype).removeprefix("torch."), "shape": list(t.shape),
            "wire": str(wire.numpy().dtype), "data": wire.numpy().tobytes(), "device": str(t.device),
        }
    if isinstance(value, np.ndarray) and value.dtype.kind in "biuf":
        if value.size > MAX_ELEMENTS:
            return {"@": "opaque", "type": f"numpy.ndarray{value.shape} {value.dtype}", "repr": "too large to compare"}
        a = np.ascontiguousarray(value)
        return {"@": "ndarray", "dtype": str(a.dtype), "shape": list(a.shape), "data": a.tobytes()}
    if isinstance(value, (tuple, list)):
        return {"@": type(value).__name__, "items": [encode(v) for v in value]}
    if isinstance(value, dict) and all(isinstance(k, (str, int)) and not isinstance(k, bool) for k in value):
        return {"@": "dict", "keys": list(value), "values": [encode(v) for v in value.values()]}
    return {"@": "opaque", "type": type(value).__qualname__, "repr": short_repr(value)}


def decode(tree):
    if not isinstance(tree, dict):
        return tree
    tag = tree.get("@")
    if tag == "tensor":
        array = np.frombuffer(tree["data"], dtype=np.dtype(tree["wire"])).reshape(tree["shape"]).copy()
        return torch.from_numpy(array).to(getattr(torch, tree["dtype"]))
    if tag == "ndarray":
        return np.frombuffer(tree["data"], dtype=np.dtype(tree["dtype"])).reshape(tree["shape"]).copy()
    if tag == "npscalar":
        return np.dtype(tree["dtype"]).type(tree["value"])
    if tag in ("tuple", "list"):
        items = [decode(v) for v in tree["items"]]
        return tuple(items) if tag == "tuple" else items
    if tag == "dict":
        return {k: decode(v) for k, v in zip(tree["keys"], tree["values"])}
    return Opaque(tree.get("type", "?"), tree.get("repr", ""))


class _PlainUnpickler(pickle.Unpickler):
    def find_class(self, module, name):  # nothing but builtin containers and scalars may arrive
        raise pickle.UnpicklingError(f"refused {module}.{name}")


def safe_loads(data: bytes):
    return _PlainUnpickler(io.BytesIO(data)).load()


def short_repr(value, limit: int = 200) -> str:
    try:
        text = repr(value)
    except Exception:  # a user object whose __repr__ raises
        text = f"<{type(value).__qualname__}>"
    return text if len(text) <= limit else text[: limit - 3] + "..."


