"""A crash of the user's code, explained: its line, and the mistake its error message points to."""

from __future__ import annotations

import re


from checker.lang import joined, t
from checker.errors import UserError
from checker.kit.authoring import Case, Fail

DEVICE_MISMATCH = ("same device", "expected device", "device type", "on the expected device", "Expected all tensors")

def user_line(err: UserError) -> int | None:
    """The deepest line of the user's file in the traceback of an error their code raised."""
    lines = re.findall(r"line (\d+)", err.traceback or "")
    return int(lines[-1]) if lines else None


def at_line(err: UserError) -> str:
    """' (line N)' for the message: where in the user's file the error their code raised points."""
    line = user_line(err)
    return t(" (line {line})", line=line) if line else ""


def raised(label: str, err: UserError, diagnosis: str | None = None) -> Fail:
    """The Fail of a check whose call into the user's code raised, with the line it raised on and, when
    the check knows why, the diagnosis."""
    return Fail(t("{label}: your code raised {err}{where}", label=label, err=err, where=at_line(err)), diagnosis,
                line=user_line(err))


def _size_names(size: int, dims: dict) -> str:
    """'5 (T)', '8 (d_k, D)', '4 (d_k / 2)', '24 (H × d_k)' or '7': what a size is in a case, when certain."""
    dims = {k: v for k, v in dims.items() if k != "seed" and v > 0}  # an int setting is no dimension
    names = [k for k, v in dims.items() if v == size]
    if not names:
        names = [f"{k} / 2" for k, v in dims.items() if v == 2 * size]
    if not names:
        keys = list(dims)
        names = [f"{a} × {b}" for i, a in enumerate(keys) for b in keys[i + 1:] if dims[a] * dims[b] == size]
        if any(dims[a] + dims[b] == size for i, a in enumerate(keys) for b in keys[i + 1:]):
            names = []  # a length plus another (a cache's past and new tokens) as well: the size says neither
    return f"{size} ({', '.join(names)})" if names and len(names) <= 3 else str(size)


def _sizes(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"-?\d+", text)]


def _shapes_in(text: str) -> list[tuple]:
    """Every shape written in an error: (2,3) as NumPy writes it, [2, 3] as torch does; of a remapped pair
    (2,3)->(2,newaxis,3), as NumPy's einsum writes it, the original only."""
    text = re.sub(r"->[(\[][^)\]]*[)\]]", "", text)
    return [tuple(_sizes(s)) for s in re.findall(r"[(\[]([-\d,\s]*\d[-\d,\s]*)[)\]]", text)]


def _shape(sizes: tuple, named) -> str:
    """(5 (T), 8 (d_k)): a shape with each size named after the case's dimensions; -1 and 0 as they are."""
    inner = ", ".join(named(n) if n > 0 else str(n) for n in sizes)
    return f"({inner},)" if len(sizes) == 1 else f"({inner})"


def _lost_axis(shapes: list[tuple]) -> tuple | None:
    """(full, reduced) when one of two shapes is the other without its last axis, and so cannot broadcast against it:
    a reduction over the last axis that dropped it, (..., T_q, T_k) against (..., T_q)."""
    if len(shapes) != 2:
        return None
    for full, reduced in (shapes, shapes[::-1]):
        if len(full) >= 2 and tuple(full[:-1]) == tuple(reduced):
            return full, reduced
    return None


def loses_an_axis(err: UserError) -> bool:
    """Whether err is a broadcast between two shapes of which one is the other without its last axis (a reduction
    that dropped it): the premise of a kata's own sentence about keepdims."""
    m = re.search(r"could not be broadcast together with (?:remapped )?shapes(.*)", err.text)
    return bool(m and _lost_axis(_shapes_in(m[1])))


def _where(err: UserError) -> str:
    line = user_line(err)
    return t("line {line}", line=line) if line else t("your code")


def crash_diagnosis(err: UserError) -> str | None:
    """What a shape error the user's code raised means in the case's own dimension names, at their line.

    Only the sizes the error names are read: a size that matches several dimensions names them all."""
    case, text = err.case, err.text
    if "view size is not compatible with input tensor's size and stride" in text:
        return t("view() needs the tensor's memory in order, and a transpose or permute before it leaves it out of "
                 "order: call .contiguous() before .view(...), or use .reshape(...)")
    if "axes don't match array" in text:
        return t("the transpose lists another number of axes than the array has there: the array's rank is not what "
                 "the code assumes; swap only the axes you mean (np.swapaxes(x, -1, -2))")
    if re.search(r"(?i:cuda)|NVIDIA|\bHIP\b|ROCm|\b(?i:mps)\b", text):
        return t("{where} asks for a GPU: the checks give every input on the CPU and expect each tensor your code "
                 "makes on the inputs' device; make them with device=x.device (or torch.zeros_like, x.new_zeros), "
                 "and leave moving the model to the caller", where=_where(err))
    if not isinstance(case, Case) or not case.dims:
        return None
    dims, where = case.dims, _where(err)
    named = lambda n: _size_names(n, dims)
    inner = (re.search(r"shapes cannot be multiplied \(\d+x(\d+) and (\d+)x\d+\)", text)
             or re.search(r"batch2 tensor to be: \[\d+, (\d+)\] but got: \[\d+, (\d+)\]", text)
             or re.search(r"not aligned: (\d+) \(dim \d+\) != (\d+) \(dim \d+\)", text))
    if "matmul" in text and (m := re.search(r"size (\d+) is different from (\d+)", text)):
        inner = (None, m[2], m[1])  # NumPy names the second operand's size first
    if inner:
        a, b = int(inner[1]), int(inner[2])
        return t("{where} multiplies a matrix of {a} columns by one of {b} rows: the inner sizes must agree; "
                 "check which axis each holds (a missing transpose, or the wrong weight)", where=where, a=named(a),
                 b=named(b))
    if m := re.search(r"Sizes of tensors must match except in dimension (-?\d+)\. Expected size (\d+) but got size "
                      r"(\d+)", text):
        return t("{where} joins tensors along axis {axis} whose other axes differ (size {a} against {b}): they do not "
                 "hold the same dimensions in the same order; check the axis you concatenate along and which axis each "
                 "holds", where=where, axis=m[1], a=named(int(m[2])), b=named(int(m[3])))
    if m := (re.search(r"size of tensor a \((\d+)\) must match the size of tensor b \((\d+)\)", text)
             or re.search(r"subscript \w+ has size (\d+) .*previously seen size (\d+)", text)):
        a, b = int(m[1]), int(m[2])
        return t("{where} meets an axis of size {a} with one of size {b}: the two tensors do not hold the same "
                 "dimensions there; check which axis each holds", where=where, a=named(a), b=named(b))
    if m := (re.search(r"shape '\[([-\d, ]+)\]' is invalid for input of size (\d+)", text)
             or re.search(r"cannot reshape array of size (\d+) into shape \(([-\d, ]+)\)", text)):
        shape, total = (m[1], int(m[2])) if m[0].startswith("shape") else (m[2], int(m[1]))
        shown = ", ".join(named(n) if n > 0 else str(n) for n in _sizes(shape))
        if not m[0].startswith("shape"):  # NumPy's words: an array
            return t("{where} asks for the shape ({shape}) from an array of {total} elements, which that shape cannot "
                     "hold: build the new shape from the sizes the array has there, and check which axis holds what",
                     where=where, shape=shown, total=named(total))
        return t("{where} asks for the shape ({shape}) from a tensor of {total} elements, which that shape cannot "
                 "hold: build the new shape from the sizes the tensor has there, and check which axis holds what",
                 where=where, shape=shown, total=named(total))
    if m := re.search(r"index (-?\d+) is out of bounds for (?:dimension|axis) \d+ with size (\d+)", text):
        index, size = int(m[1]), int(m[2])  # the axis unsaid: torch counts it within an advanced index's own axes
        return t("{where} reads index {index} of an axis of size {size}: the indices there run from 0 to {last}; an "
                 "index computed for another axis (// against %, a row for a column) or one past the end (a range, a "
                 "length or a position off by one) goes out", where=where, index=index, size=size, last=size - 1)
    if m := re.search(r"could not be broadcast together with (?:remapped )?shapes(.*)", text):
        shown = joined(t(" and "), (_shape(s, named) for s in _shapes_in(m[1])))
        if lost := _lost_axis(_shapes_in(m[1])):
            return t("{where} combines shapes {shapes}: the second is the first without its last axis, as a sum, mean "
                     "or max over that axis gives it; with keepdims=True (keepdim=True in torch) it keeps that axis as "
                     "1 and lines up with the first, one value per row", where=where,
                     shapes=joined(t(" and "), (_shape(s, named) for s in lost)))
        if "[" in m[1].replace("[original->remapped]", ""):  # torch writes [2, 3]; NumPy (2,3)
            return t("{where} combines tensors of shapes {shapes}, which do not line up axis by axis from the last "
                     "one: the tensors do not hold the same dimensions in the same order; check which axis each holds",
                     where=where, shapes=shown)
        return t("{where} combines arrays of shapes {shapes}, which do not line up axis by axis from the last one: "
                 "the arrays do not hold the same dimensions in the same order; check which axis each holds", where=where,
                 shapes=shown)
    if m := re.search(r"Attempting to broadcast a dimension of length (\d+) at (-?\d+)! Mismatching argument at index "
                      r"\d+ had ([\(\[][-\d, ]*[\)\]]); but expected shape should be broadcastable to ([\(\[][-\d, ]*[\)\]])",
                      text):
        return t("{where} combines tensors of shapes {shapes}, which do not line up axis by axis from the last one: "
                 "the tensors do not hold the same dimensions in the same order; check which axis each holds",
                 where=where, shapes=joined(t(" and "), (_shape(s, named) for s in _shapes_in(m[3] + " " + m[4]))))
    if m := re.search(r"expanded size of the tensor \((\d+)\) must match the existing size \((\d+)\).*Target sizes: "
                      r"(\[[-\d, ]*\])\.\s+Tensor sizes: (\[[-\d, ]*\])", text):
        want, have = _shapes_in(m[3] + " " + m[4])
        return t("{where} expands a tensor of shape {have} to {want}: expand() only repeats axes of size 1, so the "
                 "tensor does not hold the dimensions the code assumes there; check which axis each holds", where=where,
                 have=_shape(have, named), want=_shape(want, named))
    if m := re.search(r"shape of the mask (\[[\d, ]*\]) at index (\d+) does not match the shape of the indexed tensor "
                      r"(\[[\d, ]*\])", text):
        mask, indexed = _shapes_in(m[1] + " " + m[3])
        return t("{where} indexes a tensor of shape {indexed} with a boolean mask of shape {mask}: a mask must have the "
                 "shape of the axes it selects from; check which axis each holds", where=where,
                 indexed=_shape(indexed, named), mask=_shape(mask, named))
    return None
