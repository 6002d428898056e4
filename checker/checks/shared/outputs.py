"""What a kata's target returned, split into its outputs: the form (a tuple of so many tensors or NumPy
arrays) and the shapes each kata asks of them, said the same way in every kata."""

import numpy as np
import torch

from checker.kit import Fail, shape_relation
from checker.lang import t


def split(value, c, names: tuple[str, ...], kind: type = torch.Tensor, **shapes) -> tuple:
    """The tuple of len(names) tensors (kind torch.Tensor: what forward returns) or NumPy arrays (kind
    np.ndarray: what a function returns) that value should be, or a Fail naming what is wrong with its form.

    c: the case, or the label to name it by. shapes: name=(want, legend) for each output whose shape is
    checked, in the order of names: "weights should have shape (B, H, T_q, T_k) = (3, 2, 6, 5), got ...".
    """
    if not (isinstance(value, (tuple, list)) and len(value) == len(names) and all(isinstance(v, kind) for v in value)):
        label, shown = getattr(c, "label", c), ", ".join(names)
        if kind is np.ndarray:
            raise Fail(t("{label}: should return a tuple ({names}) of NumPy arrays", label=label, names=shown))
        raise Fail(t("{label}: forward should return a tuple ({names}) of tensors", label=label, names=shown))
    for name, got in zip(names, value):
        if name in shapes and tuple(got.shape) != shapes[name][0]:
            want, legend = shapes[name]
            raise Fail(t("{label}: {name} should have shape {legend} = {want}, got {got}",
                         label=getattr(c, "label", c), name=name, legend=legend, want=want,
                         got=tuple(got.shape)), shape_relation(tuple(got.shape), tuple(want), legend), general=True)
    return tuple(value)
