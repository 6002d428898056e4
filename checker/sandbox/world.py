"""The caller's world around one call of code under test: grad mode, the default dtype, torch's thread count,
the global random generators, the training flags and requires_grad of the modules the call was handed, and the
tensors and arrays it was handed (as arguments, or in a list or tuple that is one), and the items of the lists it was
handed (one replaced, added or taken out).

Taken before the call and compared after it, in the child around the user's code (checker.sandbox) and in the
parent around the reference (checker.kit.proxy): what the reference changes too is the contract's (greedy
decoding puts its model in eval mode, a sampler without a generator draws from the global one); anything
else the user's code changed is a failure of the check "leaves the caller's world as it was".

Plain values only: what a change records travels from the child to the parent through the plain unpickler.
"""

from __future__ import annotations

import random

import numpy as np
import torch

# The kinds of change, in the order a report names them.
KINDS = ("grad", "dtype", "threads", "training", "requires_grad", "rng", "inputs", "list")


class World:
    """What a call could change for its caller, taken now; changes() compares with later, restore() puts it back.

    modules: the modules the call is handed (the module under test, a model passed as an argument).
    rng: also take the global generators (torch, NumPy, Python's random): off where the call may draw from them
    by contract (dropout in training mode) or where the checker draws around the call itself (a driver).
    salt: draw once from each first (the child), so that seeding again with the seed last set is seen too; the
    parent's reference runs without (its checks' own draws stay where they were).
    args: the call's arguments, whose tensors and arrays are copied now and compared after the call.
    """

    def __init__(self, modules=(), *, rng: bool = True, salt: bool = True, args=()):
        self.grad = torch.is_grad_enabled()
        self.dtype = torch.get_default_dtype()
        self.threads = torch.get_num_threads()
        self.modules = [(name, m, [(sub, s.training) for sub, s in m.named_modules()],
                         [(p_name, p, p.requires_grad) for p_name, p in m.named_parameters()])
                        for name, m in modules]
        if rng and salt:  # one draw first: a call that seeds again with the seed last set would leave the state as it was
            torch.rand(1), np.random.random(), random.random()
        self.rng = (torch.get_rng_state(), np.random.get_state(), random.getstate()) if rng else None
        self.inputs = [(number, name, x, _copy(x)) for number, name, x in _handed_arrays(args)]
        self.lists = [(i + 1, a, list(a)) for i, a in enumerate(args) if isinstance(a, list) and len(a) <= 64]

    def changes(self) -> list[dict]:
        """{kind, owner, name, before, after} for each thing that is no longer as it was, in plain values.
        owner: None for the process, 0 for the module under test, i for the i-th argument (a model handed in, a
        tensor changed in place); name: the submodule or parameter (training, requires_grad), the generator (rng), or
        where in the argument the changed tensor is ("" for the argument itself, "j" for its j-th item)."""
        found = []

        def change(kind, before, after, owner=None, name=""):
            found.append({"kind": kind, "owner": owner, "name": name, "before": before, "after": after})

        if torch.is_grad_enabled() != self.grad:
            change("grad", self.grad, torch.is_grad_enabled())
        if torch.get_default_dtype() != self.dtype:
            change("dtype", _dtype(self.dtype), _dtype(torch.get_default_dtype()))
        if torch.get_num_threads() != self.threads:
            change("threads", self.threads, torch.get_num_threads())
        for owner, module, flags, params in self.modules:
            now = dict((sub, s.training) for sub, s in module.named_modules())
            changed = [(sub, was) for sub, was in flags if sub in now and now[sub] != was]
            if changed:
                sub, was = changed[0]
                change("training", was, now[sub], owner, sub)
            moved = [(p_name, was) for p_name, p, was in params if p.requires_grad != was]
            if moved:
                change("requires_grad", moved[0][1], not moved[0][1], owner, moved[0][0])
        if self.rng is not None:
            torch_state, numpy_state, python_state = self.rng
            if not torch.equal(torch.get_rng_state(), torch_state):
                change("rng", "", "", None, "torch")
            if not _same_numpy_state(np.random.get_state(), numpy_state):
                change("rng", "", "", None, "numpy")
            if random.getstate() != python_state:
                change("rng", "", "", None, "random")
        for number, name, x, before in self.inputs:
            if not _same(x, before):
                change("inputs", "", "", number, name)
        for number, now, items in self.lists:  # lses[i] = lses[i] - m: the caller's list holds another tensor now
            moved = [j for j, (x, y) in enumerate(zip(now, items)) if x is not y]
            if (moved or len(now) != len(items)) and not any(
                    c["kind"] == "inputs" and c["owner"] == number for c in found):
                change("list", "", "", number, str(moved[0]) if moved else "")
        return found

    def restore(self) -> None:
        """Put back what the caller had: grad mode, dtype, threads, flags. The generators are left as they are:
        a contract that draws from them draws anew on each call, and every check seeds what it compares."""
        torch.set_grad_enabled(self.grad)
        torch.set_default_dtype(self.dtype)
        if torch.get_num_threads() != self.threads:
            torch.set_num_threads(self.threads)
        for _, module, flags, params in self.modules:
            subs = dict(module.named_modules())
            for sub, was in flags:
                if sub in subs:
                    subs[sub].training = was
            for _, p, was in params:
                if p.requires_grad != was and (p.is_leaf or not was):
                    p.requires_grad_(was)


def world_key(change: dict, target: str) -> tuple:
    """What a change is known by when the parent asks whether the contract makes it: its kind and owner, and for a
    tensor handed in, the function too (argument 1 of one function is not argument 1 of another)."""
    return (change["kind"], change["owner"], target) if change["kind"] in ("inputs", "list") else \
        (change["kind"], change["owner"])


def handed_modules(args, module=None) -> list[tuple[int, torch.nn.Module]]:
    """The modules a call is handed: (0, the module under test), then (i, the i-th argument) for each argument
    that is a module (a model handed to a function)."""
    found = [(0, module)] if isinstance(module, torch.nn.Module) else []
    found += [(i + 1, a) for i, a in enumerate(args) if isinstance(a, torch.nn.Module)]
    return found


def _handed_arrays(args):
    """(argument number from 1, "" or "j", the tensor or array) for each one a call is handed, in a list or tuple
    too (flash-decoding's merge takes lists of tensors). A module's own parameters are not among them."""
    for i, a in enumerate(args):
        for name, x in [("", a)] if _array(a) else [(str(j), x) for j, x in enumerate(a)] if isinstance(
                a, (list, tuple)) and len(a) <= 64 else []:
            if _array(x):
                yield i + 1, name, x


def _array(x) -> bool:
    return (isinstance(x, torch.Tensor) and x.device.type != "meta") or isinstance(x, np.ndarray)


def _copy(x):
    return x.detach().clone() if isinstance(x, torch.Tensor) else x.copy()


def _same(now, before) -> bool:
    """The same values (NaN where NaN was), shape and dtype: nothing written into it."""
    if isinstance(now, np.ndarray):
        return now.shape == before.shape and now.dtype == before.dtype and np.array_equal(
            now, before, equal_nan=now.dtype.kind in "fc")
    now = now.detach()
    return now.shape == before.shape and now.dtype == before.dtype and bool(torch.equal(now, before) or (
        now.is_floating_point() and ((now == before) | (now.isnan() & before.isnan())).all()))


def _dtype(dtype: torch.dtype) -> str:
    return str(dtype).removeprefix("torch.")


def _same_numpy_state(a, b) -> bool:
    return a[0] == b[0] and np.array_equal(a[1], b[1]) and tuple(a[2:]) == tuple(b[2:])
