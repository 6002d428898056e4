"""The contract's own edge values are drawn by the checks (issue 36): every value a stub's docstring allows at
the edge of a parameter's range reaches the user's code in some check.

The edges are derived from each stub's docstring, never listed per kata:
- an id (a parameter named *_id or *_idx, documented as an int): 0, the id a vocabulary gives first and the one
  `if eos_id:` forgets;
- `NAME  int >= K` (or `int t >= K`): K itself;
- `NAME  float in [a, b]`: both ends; `(a, b]`: b;
- `... or None`: None;
- `NAME >= V keeps all` (V a legend letter for the last axis): a value at least the last axis of the call's tensor;
- a tensor documented as `(B, ...)`: a batch of one;
- a tensor documented with float16 or bfloat16 among its dtypes: each of them;
- a parameter named `optimizer`: an optimizer of two param groups or more.

What reached the user's code is recorded in the sandbox's child: the reference is loaded as the user's file, and
each of its public functions and its classes' __init__ and forward are wrapped to write down their arguments
(fork only: the child inherits the wrapping)."""

import ast
import inspect
import json
import multiprocessing
import os
import re
from functools import wraps

import pytest

from checker import catalogue, engine
from checker.sandbox import child, processes
from checker.engine import SOLUTIONS

KATAS = [k for k in catalogue.all_katas()]
ROOT_STUBS = SOLUTIONS.parent / "katas"
pytestmark = pytest.mark.skipif("fork" not in multiprocessing.get_all_start_methods() or processes.accelerator(),
                                reason="the child inherits the recording only when forked")


# ----------------------------------------------------------------------------- the edges, from the docstring


def _documented(stub: str) -> dict[str, str]:
    """Each documented parameter (a line `    NAME  text`, or `    NAME, NAME  text`, of a docstring) -> its text,
    continuation lines included."""
    found: dict[str, str] = {}
    for node in ast.walk(ast.parse(stub)):
        if not isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef)) or not ast.get_docstring(node):
            continue
        current: list[str] = []
        indent = None
        for line in ast.get_docstring(node, clean=False).splitlines():
            head = re.match(r"^( +)([A-Za-z_][A-Za-z_0-9]*(?:, [A-Za-z_][A-Za-z_0-9]*)*) {2,}(\S.*)$", line)
            if head:
                current = [name for name in head.group(2).split(", ")]
                indent = len(head.group(1))
                for name in current:
                    found[name] = found.get(name, "") + " " + head.group(3)
            elif current and line.strip() and len(line) - len(line.lstrip()) > indent:
                for name in current:
                    found[name] += " " + line.strip()
            else:
                current = []
    return found


def edges(stub: str, params: set[str]) -> list[tuple[str, str, object]]:
    """(parameter, rule, value) for every edge the stub's docstring allows for one of params."""
    out = []
    for name, text in _documented(stub).items():
        if name not in params:
            continue
        if re.search(r"_(id|idx)$", name) and re.search(r"\bints?\b", text):
            out.append((name, "equals", 0))
        for bound in re.findall(r"\bint(?: [A-Za-z]\w*)? >= (\d+)", text):
            out.append((name, "equals", int(bound)))
        for low, a, b, high in re.findall(r"\bfloat(?: [^\s]+)? in ([\[(])(\d+(?:\.\d+)?), (\d+(?:\.\d+)?)([\])])", text):
            if low == "[":
                out.append((name, "equals", float(a)))
            if high == "]":
                out.append((name, "equals", float(b)))
        if re.search(r"\bor None\b", text):
            out.append((name, "equals", None))
        if re.search(rf"\b{name} >= V\b", text):
            out.append((name, "at least the last axis", None))
        if text.lstrip().startswith("(B,"):
            out.append((name, "batch of", 1))
        for dtype in ("float16", "bfloat16"):
            if re.search(rf"\b{dtype}\b", text) and text.lstrip().startswith("("):
                out.append((name, "dtype", dtype))
    out += [("optimizer", "param groups", 2)] if "optimizer" in params else []
    return out


# ----------------------------------------------------------------------------- what reached the user's code


def _summary(value):
    import numpy as np
    import torch

    if isinstance(value, (torch.Tensor, np.ndarray)):
        return {"shape": list(value.shape), "dtype": str(value.dtype).removeprefix("torch.")}
    if isinstance(value, torch.optim.Optimizer):
        return {"groups": len(value.param_groups)}
    if value is None or isinstance(value, (bool, int, float)):
        return {"value": value}
    return {"other": type(value).__name__}


def _recorder(fn, log: int):
    signature = inspect.signature(fn)

    @wraps(fn)
    def recorded(*args, **kwargs):
        try:
            bound = signature.bind(*args, **kwargs)
        except TypeError:
            return fn(*args, **kwargs)
        call = {name: _summary(value) for name, value in bound.arguments.items() if name != "self"}
        shapes = [s["shape"] for s in call.values() if "shape" in s]
        call["_last_axis"] = shapes[0][-1] if shapes and shapes[0] else None
        os.write(log, (json.dumps(call) + "\n").encode())  # a descriptor the child inherited: no open()
        return fn(*args, **kwargs)

    return recorded


def _recording_load(log: int):
    load = child._HANDLERS["load"]

    def recording(req):
        reply = load(req)
        module = child._user
        for name, obj in list(vars(module).items()):
            if name.startswith("_") or getattr(obj, "__module__", None) != module.__name__:
                continue
            if isinstance(obj, type):
                for method in ("__init__", "forward"):
                    if method in vars(obj):
                        setattr(obj, method, _recorder(vars(obj)[method], log))
            elif inspect.isfunction(obj):
                setattr(module, name, _recorder(obj, log))
        return reply

    return recording


def drawn(calls: list[dict], name: str, rule: str, value) -> bool:
    for call in calls:
        got = call.get(name)
        if got is None:
            continue
        if rule == "equals" and "value" in got and got["value"] == value and type(got["value"]) is not bool:
            return True
        if rule == "at least the last axis" and isinstance(got.get("value"), int) and call["_last_axis"] \
                and got["value"] >= call["_last_axis"]:
            return True
        if rule == "batch of" and got.get("shape", [None])[:1] == [value]:
            return True
        if rule == "dtype" and got.get("dtype") == value:
            return True
        if rule == "param groups" and got.get("groups", 0) >= value:
            return True
    return False


def _params(kata) -> set[str]:
    tree = ast.parse((ROOT_STUBS / kata.file).read_text(encoding="utf-8"))
    return {a.arg for node in ast.walk(tree) if isinstance(node, ast.FunctionDef)
            for a in node.args.args + node.args.kwonlyargs if a.arg != "self"}


def test_the_edges_are_read_from_a_contract():
    stub = '''
def f(logits, top_k=None, eos_id=0, max_new_tokens=1, p=0.5, x=None, optimizer=None):
    """Shape legend:
        B  batch

    logits          (B, V) float
    top_k           int or None: top_k >= V keeps all
    eos_id          int: the end of sequence
    max_new_tokens  int >= 0: at most this many
    p               float in [0, 1], a rate
    x               (..., D) float (float32, or float16/bfloat16)
    """
'''
    found = edges(stub, {"logits", "top_k", "eos_id", "max_new_tokens", "p", "x", "optimizer"})
    assert sorted(found, key=repr) == sorted([
        ("logits", "batch of", 1), ("top_k", "equals", None), ("top_k", "at least the last axis", None),
        ("eos_id", "equals", 0), ("max_new_tokens", "equals", 0), ("p", "equals", 0.0), ("p", "equals", 1.0),
        ("x", "dtype", "float16"), ("x", "dtype", "bfloat16"), ("optimizer", "param groups", 2)], key=repr)
    assert drawn([{"top_k": {"value": 9}, "_last_axis": 9}], "top_k", "at least the last axis", None)
    assert not drawn([{"top_k": {"value": 8}, "_last_axis": 9}], "top_k", "at least the last axis", None)
    assert not drawn([{"p": {"value": False}}], "p", "equals", 0)  # False is no rate of 0


@pytest.mark.parametrize("kata", KATAS, ids=[k.id for k in KATAS])
def test_every_edge_value_a_contract_allows_is_drawn_by_some_check(kata, tmp_path, monkeypatch):
    wanted = edges((ROOT_STUBS / kata.file).read_text(encoding="utf-8"), _params(kata))
    if not wanted:
        return
    log = tmp_path / "calls.jsonl"
    fd = os.open(log, os.O_WRONLY | os.O_CREAT | os.O_APPEND)
    monkeypatch.setenv("KATA_SANDBOX", "fork")
    monkeypatch.setitem(child._HANDLERS, "load", _recording_load(fd))
    try:
        copy = tmp_path / (SOLUTIONS / kata.file).name  # a file of the user's: kata's own are off limits
        copy.write_text((SOLUTIONS / kata.file).read_text(encoding="utf-8"), encoding="utf-8")
        result = engine.check_file(kata, copy, timed=False)
    finally:
        os.close(fd)
    assert result.status == "pass", result
    calls = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    missing = [edge for edge in wanted if not drawn(calls, *edge)]
    assert not missing, f"{kata.id}: the contract allows these, and no check draws them: {missing}"
