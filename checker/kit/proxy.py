"""The Kit a check is handed: every way to the user's code (user, drive, inspect, layout) goes through it."""

from __future__ import annotations

import inspect
import time

import numpy as np
import torch

from checker.lang import t
from checker.errors import UserError
from checker.sandbox.child import CHILD_PACKAGE, driver_allowed
from checker.sandbox.parent import Kept
from checker.sandbox.world import World, handed_modules, world_key
from checker.kit.authoring import FLOAT32_INTERNALS, Case, Convention, Fail, options
from checker.kit.compare import DTYPES, float_tensor, as_outputs, compare, matches
from checker.kit.diagnosis import MEMORY_NAMES, identify

# ----------------------------------------------------------------------------- the user proxy


SEARCHES_PER_FILE = 2  # a file's searches together take at most this many times one search's budget
MIN_SEARCH_SECONDS = 0.05  # less left of a file's search budget than this: no search starts
# The errors a slip in tensor code raises (a size, an axis, an index, a dtype): the error model looks for the change to
# the reference that raises the same. A NameError or an AttributeError comes from a name the reference does not hold.
CRASHES = {"RuntimeError", "ValueError", "IndexError", "TypeError"}


class Kit:
    """Handed to every check: calls the user's code (in the child) and the reference (here)."""

    def __init__(self, spec, sandbox, solution, *, makes_tensors: bool = True, source: str | None = None,
                 error_model: bool = True):
        """makes_tensors: rules.makes_tensors of the user's source; False skips the meta-device run. source: the
        user's file, where the error model looks for the line a rewrite points at. error_model: False for a verdict
        without a report (mutation tests), where its search would cost a second or three per failing file."""
        self.spec, self.sandbox, self.solution, self.source = spec, sandbox, solution, source
        self.error_model = error_model
        self.options = options(spec)
        self.convention: Convention | None = None  # the accepted variant the user's code follows, if any
        self._follows_none = False  # settle() looked, and the user's code follows no accepted convention
        self.divergence_line: int | None = None  # the user's line that feeds the first diverging part
        self.user_seconds: float | None = None  # set by time(): fastest run of the user's code
        self.reference_seconds: float | None = None
        self.diagnosis: str | None = None
        self.general_diagnosis: str | None = None  # shown only when no check named the mistake
        self.makes_tensors = makes_tensors
        self._search_left: float | None = None  # seconds of CPU the error model has left for this file
        self._found: list = []  # the changes earlier searches of this file found: the next search tries them first
        self._states: dict = {}  # (case, dtype) -> the reference's weights, built once
        # (kind, owner) of what the reference changes in its caller's world (checker.sandbox.world): the
        # contract's, so the user's code may change it too (greedy decoding puts the model in eval mode)
        self.contract_changes: set = set()

    # -- the module or function under test

    def init(self, case: Case):
        make = getattr(self.spec, "init", None)
        return make(case) if make else None

    def state(self, case: Case, dtype: str, copy: bool = True):
        """The reference's weights for this case (seeded), loaded into the user's module by name; copy=False: the
        kit's own, which nothing may edit."""
        key = (case.id, dtype)
        if key not in self._states:
            self._states[key] = self._make_state(case, dtype)
        cached = self._states[key]  # a fresh copy each time: a check may edit the weights it gets
        return cached if cached is None or not copy else {k: v.clone() for k, v in cached.items()}

    def _make_state(self, case: Case, dtype: str):
        torch.manual_seed(7919 * case.id)  # before init(case), which may build a module of its own
        init = self.init(case)
        if init is None or not self.options.LOAD_STATE:
            return None
        module = getattr(self.solution, self.spec.TARGET)(**init).to(DTYPES[dtype])
        # Move every weight away from its initial value (LayerNorm starts at gamma=1, beta=0),
        # so that a swapped gamma/beta or a forgotten bias changes the result.
        g = case.generator(salt=17)
        with torch.no_grad():
            for p in module.parameters():
                spread = float(p.std()) if p.numel() > 1 and float(p.std()) > 0 else 1.0
                p.add_(torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype) * 0.3 * spread)
        return {k: v.detach().clone() for k, v in module.state_dict().items()}

    def user(self, args: tuple, *, case: Case | None = None, dtype: str = "float64",
             target: str | None = None, init=None, state=None, return_args: bool = False, train: bool = False,
             method: str | None = None, kwargs: dict | None = None):
        """Call the user's TARGET in the child. Module katas are built from init and given state."""
        return self._user_reply(args, case=case, dtype=dtype, target=target, init=init, state=state,
                                return_args=return_args, train=train, method=method, kwargs=kwargs)[0]

    def _user_reply(self, args, *, case=None, dtype="float64", target=None, init=None, state=None,
                    return_args=False, train=False, method=None, repeat=1, cotangents=None, kwargs=None):
        # a call the reference can make alike, where the error model may look for the change that raises the same
        alike = not (return_args or train or method or cotangents or kwargs)
        given = {k: v for k, v in (("init", init), ("state", state), ("target", target)) if v is not None}
        if case is not None:
            init = self.init(case) if init is None else init
            weights = self.state(case, dtype, copy=False) if state is None else None
            if weights is not None:  # the case's own weights: sent once
                state = Kept((case.id, dtype), weights)
        try:
            reply = self.sandbox.request(
                "call", target=target or self.spec.TARGET, init=init, state=state, dtype=dtype,
                args=tuple(args), kwargs=kwargs or {}, train=train, method=method, return_args=return_args,
                repeat=repeat, cotangents=cotangents)
        except UserError as err:
            err.case = err.case or case  # the sizes in a shape error are named after this case's dimensions
            if alike and err.call is None:
                err.call = (tuple(args), {"dtype": dtype, **given, **({"case": case} if case is not None else {})})
            raise
        value = (reply["value"], reply["args_after"]) if return_args else reply["value"]
        return value, reply["seconds"]

    def drive(self, driver, *args):
        """Run driver(user_module, *args) in the child; return its (decoded) value.

        driver is a function of the kata's own checker/checks/TRACK_NAME/driver.py, or of checker.checks.child
        (drivers several katas share): the child imports it by name, so it never travels as code.
        """
        module, name = driver.__module__, driver.__qualname__
        if not driver_allowed(module):
            raise ValueError(f"a driver lives in {CHILD_PACKAGE} or in its kata's driver.py, not in {module}")
        return self.sandbox.request("drive", driver=f"{module}:{name}", args=tuple(args))["value"]

    def inspect(self, target: str | None = None, init: dict | None = None) -> dict:
        """What the user's file defines: names, whether target exists, its kind and parameters;
        with init, the parameters, buffers and submodules of target(**init)."""
        return self.sandbox.request("inspect", target=target or self.spec.TARGET, init=init)

    def layout(self, args: tuple, *, case: Case | None = None, target: str | None = None, device: str = "meta",
               dtype: str | None = "float64") -> list:
        """Device, dtype and shape of each returned tensor when the inputs (and the module) are on device."""
        init = self.init(case) if case is not None else None
        return self.sandbox.request("call", target=target or self.spec.TARGET, init=init, state=None, dtype=dtype,
                                    args=tuple(args), device=device)["value"]

    def boundary(self) -> list[tuple]:
        """What the sandbox's boundary recorded so far (checker.sandbox.boundary): ("trapped", line, name) for an
        off-limits call, ("refused", kind, detail) for what it refused the user's code."""
        return [tuple(entry) for entry in self.sandbox.request("report")["value"]]

    def trapped(self) -> list:
        """[(line, name)] of the off-limits calls the user's code made so far."""
        return [(line, name) for what, line, name in self.boundary() if what == "trapped"]

    def time(self, case: Case, repeat: int = 3) -> None:
        """Fastest of `repeat` runs of the user's code and of the reference on one case, same inputs."""
        args = self.inputs(case)
        _, self.user_seconds = self._user_reply(args, case=case, repeat=repeat)
        fn, runs = self._reference_callable(case=case), []
        with torch.no_grad():
            for _ in range(repeat):
                start = time.perf_counter()
                fn(*args)
                runs.append(time.perf_counter() - start)
        self.reference_seconds = min(runs)

    def reference(self, args: tuple, *, case: Case | None = None, dtype: str = "float64",
                  target: str | None = None, init=None, state=None, impl=None, method: str | None = None,
                  kwargs: dict | None = None):
        """Call the reference (or impl, a named mistake) the same way the user's code was called."""
        fn = self._reference_callable(case=case, dtype=dtype, target=target, init=init, state=state, impl=impl)
        module = fn if isinstance(fn, torch.nn.Module) else None
        if method:
            fn = getattr(fn, method)
        args = _clone(args)
        with torch.no_grad():
            if impl is not None:  # a named mistake or a rewrite: nothing of it is the contract's, and it runs often
                return fn(*args, **(kwargs or {}))
            watch = World(handed_modules(args, module), salt=False, args=args)
            try:
                return fn(*args, **(kwargs or {}))
            finally:
                if impl is None:  # what the reference changes for its caller is the contract's (kit.world_check)
                    self.contract_changes |= {world_key(c, target or self.spec.TARGET) for c in watch.changes()}
                watch.restore()

    def _reference_callable(self, *, case=None, dtype="float64", target=None, init=None, state=None, impl=None):
        if case is not None:
            init = self.init(case) if init is None else init
            state = self.state(case, dtype) if state is None else state
        followed = self.convention.impl if self.convention is not None and target in (None, self.spec.TARGET) else None
        obj = impl or followed or getattr(self.solution, target or self.spec.TARGET)
        if init is not None and isinstance(obj, type):
            module = obj(**init)
            if not isinstance(module, torch.nn.Module):  # a NumPy class: its own weights, called by forward
                return module.forward
            module = module.to(DTYPES[dtype])
            if state is not None:
                module.load_state_dict(state, strict=True)
            obj = module.eval()
        return obj

    def gradients(self, case: Case, cotangents: list, *, user: bool) -> dict:
        """{"args": [grad or None], "params": {name: grad}} of sum(output * cotangent), float64."""
        args = self.inputs(case)
        if user:
            return self._user_reply(args, case=case, cotangents=cotangents)[0]
        fn = self._reference_callable(case=case)
        leaves = [a.detach().clone().requires_grad_(True) if float_tensor(a) else a for a in args]
        value = fn(*leaves)
        outs = [o for o in (value if isinstance(value, (tuple, list)) else (value,)) if float_tensor(o)]
        sum((o * c).sum() for o, c in zip(outs, cotangents)).backward()
        params = dict(fn.named_parameters()) if isinstance(fn, torch.nn.Module) else {}
        return {"args": [a.grad if float_tensor(a) else None for a in leaves], "params": {n: p.grad for n, p in params.items()}}

    def tolerance(self, dtype: str):
        """The kata's own (rtol, atol) for dtype, if its check module sets TOLERANCES; else the default."""
        if dtype == "float64" and self.convention is not None and self.convention.tol is not None:
            return self.convention.tol
        return self.options.TOLERANCES.get(dtype)

    def inputs(self, case: Case, dtype: str = "float64") -> tuple:
        return tuple(self.spec.inputs(case, dtype))

    # -- diagnosis

    def settle(self) -> Convention | None:
        """The first accepted convention the user's code follows on every case in float64, adopted as the
        reference for every later comparison; None when it follows none (or the reference itself). Looked for
        once: later calls say what the first found."""
        opts = self.options
        if self.convention is not None or self._follows_none:
            return self.convention
        self._follows_none = True
        if opts.OUTPUTS is None or not conventions(opts):
            return None
        try:
            got = [as_outputs(self.user(self.inputs(c), case=c), opts.OUTPUTS) for c in opts.CASES]
        except (Fail, UserError):
            return None  # the checks say what is wrong with it
        for convention in conventions(opts):
            try:
                wrong = [as_outputs(self.reference(self.inputs(c), case=c, impl=convention.impl), opts.OUTPUTS)
                         for c in opts.CASES]
            except Exception:  # noqa: BLE001 - a convention that cannot run on these cases does not apply
                continue
            if all(matches(u, w, convention.tol) for g, e in zip(got, wrong) for u, w in zip(g, e)):
                self.convention = convention
                return convention
        return None

    def outputs(self, args: tuple, **how) -> tuple | None:
        """The user's TARGET on args (how: as user()), split into the kata's OUTPUTS; None when what came back has
        another form, which the shapes check reports."""
        try:
            return as_outputs(self.user(args, **how), self.spec.OUTPUTS)
        except Fail:
            return None

    def judge(self, label, args: tuple, got, want, outputs: list, *, target: str | None = None,
              dtype: str = "float64", what="", others: tuple = ()) -> None:
        """A check's own call, judged as the standard numerics judge theirs: each of outputs compared with the
        reference's (want); on a difference, Fail with label and what (the case's label, then how it was called)
        and, in float64, the named mistake or the error model's one change that gives got on these args, and on
        the check's other inputs (others: argument tuples of the same call), where one input fits several."""
        split = None
        try:
            split = as_outputs(got, outputs)
            for (name, legend), u, e in zip(outputs, split, as_outputs(want, outputs)):
                compare(u, e, name, legend, tol=self.tolerance(dtype))
        except Fail as fail:
            found = None
            if dtype == "float64" and split is not None and all(isinstance(x, torch.Tensor) for x in split):
                found = self.name_mistake(args, split, target=target, outputs=outputs, tol=self.tolerance(dtype),
                                          others=others)
            raise Fail(t("{label}{what}: {fail}", label=label, what=what, fail=fail.message),
                       found or fail.diagnosis, general=fail.general and not found) from None

    def diagnose(self, case: Case, dtype: str, user_outputs: tuple) -> str | None:
        """Name the known mistake whose result on this case equals the user's outputs, if any; else the error
        model's change to the reference. A composite kata says first which given sub-part's input differs from the
        reference's (where), then the change that gives the user's outputs (what), when the error model finds one."""
        found = self.name_mistake(self.inputs(case, dtype), tuple(user_outputs), tol=self.tolerance(dtype),
                                  outputs=self.spec.OUTPUTS, rewrites=False, case=case, dtype=dtype)
        if found and self.options.PARTS and dtype == "float64" and self.divergence_line is None:
            try:  # a named mistake, placed where it first shows: the line feeding the first part fed otherwise
                self.first_divergence(case)
            except (Fail, UserError):
                pass
        if found or dtype != "float64" or self.convention is not None:
            return found
        where = None
        if self.options.PARTS:
            try:
                where = self.first_divergence(case)
            except (Fail, UserError):
                pass  # the user's module cannot be recorded: the other checks say why
        line = self.divergence_line
        what = self.rewrite(case, tuple(user_outputs))
        self.divergence_line = line or self.divergence_line  # the part's line first: it is where the user looks
        found = t("{where}; {what}", where=where, what=what) if where and what else where or what
        if found:
            self.diagnosis = found if self.diagnosis in (None, what) else self.diagnosis
        return found

    def rewrite(self, case: Case, user_outputs: tuple) -> str | None:
        """The error model (checker.kit.errormodel): the one change to the reference's code that gives the user's
        outputs on every case, said with the user's line that holds it; None when no rewrite fits, or too many, or
        when the user's code follows an accepted convention (its check compares again, against that: no search)."""
        if not self._may_search() or self.settle() is not None:
            return None
        outputs, tol = self.spec.OUTPUTS, self.tolerance("float64")
        got = {case.id: user_outputs}
        for c in self.options.CASES:
            if c is not case:
                try:
                    got[c.id] = as_outputs(self.user(self.inputs(c), case=c), outputs)
                except (Fail, UserError, ValueError, TypeError):
                    pass  # a case the user's code cannot run predicts nothing here

        def run(module, c):
            impl = getattr(module, self.spec.TARGET)
            return as_outputs(self.reference(self.inputs(c), case=c, impl=impl), outputs)

        def same(mine, theirs):
            return _shapes(mine) == _shapes(theirs) and _all_match(mine, theirs, tol)

        key = (self.spec.__name__, outputs and tuple(outputs))  # run depends on the rewrite and the case alone
        return self._said(self._search(run, [case, *self.options.CASES], got, same, key))

    def _may_search(self) -> bool:
        """Whether the error model is on and the file's searches have time left (checked before the user's code is
        called on the other cases, which only a search needs)."""
        if not self.error_model:
            return False
        import checker.kit.errormodel as errormodel

        if self._search_left is None:
            self._search_left = SEARCHES_PER_FILE * errormodel.search_seconds(
                "composite" if self.options.PARTS else "single")
        return self._search_left >= MIN_SEARCH_SECONDS

    def _search(self, run, cases, got, same, key=None) -> list:
        """errormodel.search: each search takes at most the kata's budget (1 s of CPU for a kata of one part, 3 s
        for a layer or a model), and all of a file's failing checks together at most SEARCHES_PER_FILE times
        that (the earliest stage searches first)."""
        import checker.kit.errormodel as errormodel

        if not self._may_search():
            return []
        budget = errormodel.search_seconds("composite" if self.options.PARTS else "single")
        start = time.process_time()
        try:
            return errormodel.search(self.solution, run, cases, got, same, min(budget, self._search_left), key,
                                     found=self._found)
        finally:
            self._search_left -= time.process_time() - start

    def _said(self, fits: list, raised: bool = False) -> str | None:
        """The error model's sentence for what fits, kept as the diagnosis with the user's line that holds it."""
        import checker.kit.errormodel as errormodel

        found = errormodel.explain(fits, raised=raised)
        if found:
            self.diagnosis = self.diagnosis or found
            self.divergence_line = errormodel.locate(self.source, fits)
        return found

    def recorded_calls(self, case: Case, *, target: str | None = None, init=None, state=None,
                       args: tuple | None = None) -> tuple[list, list]:
        """(the reference's calls, the user's calls) of the given sub-parts on one case, float64, eval mode.

        Torch: forward hooks on the named sub-modules. NumPy: the named module functions (or the forward of
        the named attributes of a class) wrapped for one call."""
        from checker.checks.child.recording import record_numpy, record_user, recorded_forward

        target = target or self.spec.TARGET
        args = self.inputs(case) if args is None else args
        init, parts = self.init(case) if init is None else init, self.options.PARTS
        if self.spec.__name__.startswith("checker.checks.numpy_"):
            make = getattr(self.spec, "weights", None)
            weights = make(case, "float64") if isinstance(getattr(self.solution, target), type) else None
            with np.errstate(all="ignore"):
                want = record_numpy(self.solution, target, parts, _clone(args), init, weights)["calls"]
            got = self.drive(record_numpy, target, parts, args, init, weights)["calls"]
            return want, got
        state = self.state(case, "float64") if state is None else state
        reference = self._reference_callable(case=case, target=target, init=init, state=state)
        want = recorded_forward(reference, parts, _clone(args))["calls"]
        got = self.drive(record_user, target, init, state, args, parts)["calls"]
        return want, got

    def first_divergence(self, case: Case, *, target: str | None = None, init=None, state=None,
                         args: tuple | None = None) -> str | None:
        """'norm2 receives x + cross_attn's output, ...; expected norm1's output + ...': the first given
        sub-part, in the reference's order of calls, whose input differs from the reference's.

        A call the user never makes is passed over (NumPy users may write a given function out inline), and
        named only when no later call diverges."""
        args = self.inputs(case) if args is None else args
        want, got = self.recorded_calls(case, target=target, init=init, state=state, args=args)
        named = dict(zip(arg_names(self, target), args))
        candidates = [(t("the encoder memory {name}", name=n) if n in MEMORY_NAMES else
                       t("the layer's input {name}", name=n), v) for n, v in named.items()
                      if isinstance(v, (torch.Tensor, np.ndarray))]
        times = {name: sum(w[0] == name for w in want) for name, *_ in want}

        def label(name, k):
            return name if times[name] == 1 else t("{part} call {number}", part=name, number=k + 1)

        seen: dict[str, int] = {}
        never = None
        for name, ref_inputs, ref_output, *_ in want:
            k = seen[name] = seen.get(name, -1) + 1
            mine = [c for c in got if c[0] == name]
            if name in self.options.LOOPED_PARTS and len(mine) != times[name]:
                pass  # called once per head: not comparable call by call
            elif k >= len(mine):
                never = never or (name, k)
            elif len(mine[k][1]) != len(ref_inputs):
                self.divergence_line = mine[k][3]
                return t("first divergence: {part} receives {got} tensor arguments; the reference passes {want} (a mask "
                         "left out, or passed where the reference passes none?)", part=label(name, k),
                         got=len(mine[k][1]), want=len(ref_inputs))
            else:
                for j, (expected, actual) in enumerate(zip(ref_inputs, mine[k][1])):
                    if not matches(actual, expected):
                        self.divergence_line = mine[k][3]
                        # what the user's own earlier calls gave, for a part called out of its place
                        earlier = got[:next(i for i, c in enumerate(got) if c is mine[k])]
                        theirs = [(t("your {part}'s output", part=c[0]), c[2]) for c in earlier if c[2] is not None]
                        what = identify(actual, candidates) or identify(actual, theirs) or t(
                            "a tensor that is none of the layer's inputs and outputs")
                        expected = identify(expected, candidates) or t("what the reference gives it")
                        params = mine[k][4] if len(mine[k]) > 4 else []
                        if len(params) == len(mine[k][1]):  # NumPy: the parameter's own name
                            return t("first divergence: {part} (its argument {param}) receives {what}; expected "
                                     "{expected}", part=label(name, k), param=params[j], what=what, expected=expected)
                        return t("first divergence: {part} (argument {number}) receives {what}; expected {expected}",
                                 part=label(name, k), number=j + 1, what=what, expected=expected)
            candidates.append((t("{part}'s output", part=label(name, k)), ref_output))
            candidates += [(t("{part}'s input", part=label(name, k)), ref_inputs[0])] if ref_inputs else []
        if never is not None:
            return t("{part} is never called where the reference calls it (call {number})", part=never[0],
                     number=never[1] + 1)
        for name in [n for n in times if n not in self.options.LOOPED_PARTS]:  # the extra calls change the result
            extra = sum(c[0] == name for c in got)
            if extra > times[name]:
                self.divergence_line = [c for c in got if c[0] == name][times[name]][3]
                return t("{part} is called {actual} time(s); the reference calls it {expected} time(s): the extra call "
                         "changes the result", part=name, actual=extra, expected=times[name])
        return None

    def name_mistake(self, args: tuple, got, mistakes=None, *, tol=None, outputs=None, same=None, run=None,
                     rewrites: bool = True, confirm=None, others: tuple = (), **how) -> str | None:
        """The explanation of the first mistake (default: the kata's MISTAKES) whose result on args equals
        got, one value or a tuple of them; it becomes the report's diagnosis.

        run(mistake) computes a mistake's result when calling the reference with impl=mistake.impl
        (and `how`: case=, dtype=, target=, method=) is not how this kata runs one; same(got, wrong)
        replaces "every value matches within tol"; outputs splits a result as as_outputs() does.
        confirm(mistake) -> bool: a check's own inputs beyond args, where the mistake must give the user's results
        too before it is said (one input fits more than one way of being wrong). others: more argument tuples of the
        same call, which the error model's change must fit as well.
        """
        right = None  # the reference's own result on args, computed once where a mistake is compared
        for mistake in self.options.MISTAKES if mistakes is None else mistakes:
            try:
                with np.errstate(all="ignore"):
                    wrong = run(mistake) if run else self.reference(args, impl=mistake.impl, **how)
                wrong = as_outputs(wrong, outputs) if outputs else wrong
            except Exception:  # noqa: BLE001 - a mistake that cannot run on these inputs does not apply
                continue
            if same is not None:
                found = same(got, wrong)
            else:
                found = _all_match(got, wrong, tol)
            if found and run is None:
                # a mistake these inputs cannot tell from the reference (a column of sin(pos · 4e-4) left 0, within
                # float32's tolerance) says nothing of why the user's result is wrong
                try:
                    if right is None:
                        with np.errstate(all="ignore"):
                            right = self.reference(args, **how)
                        right = as_outputs(right, outputs) if outputs else right
                    found = not (same(right, wrong) if same is not None else _all_match(right, wrong, tol))
                except Exception:  # noqa: BLE001 - the reference runs on the check's inputs; if not, judge as before
                    pass
            if found and run is None and same is None and mistakes is None and (
                    set(how) == {"case", "dtype"} or (not how and tol is None)):
                # on a check's own input too, where it compares as the standard checks do: one input fits more than
                # one way of being wrong (1/d_k is 1/√d_v where d_v = d_k²), the kata's cases tell them apart, to
                # within the order a sum is taken in (the mistake's sin(pos · 10000^(2i/d)) and the user's part at
                # 1e-8 where pos is 2048). A check with a comparison of its own (a tolerance, a cast) judges alone.
                found = self._reproduces(mistake, how.get("case"), how.get("dtype", "float64"),
                                         tol if how else SAME_MISTAKE_TOL, outputs)
            if found and confirm is not None:
                found = confirm(mistake)
            if found:
                explain = t(mistake.explain)
                self.diagnosis = self.diagnosis or explain
                return explain
        if mistakes is None and rewrites and self.error_model:  # no named mistake: the error model, on this input
            return self._rewrite_once(args, got, tol=tol, outputs=outputs, same=same, run=run, others=others, **how)
        return None

    def rewrite_crash(self, err: UserError) -> str | None:
        """The error model on the user's code raising: the one change to the reference that raises the same error,
        word for word, on the call that raised (and on the kata's other cases, their outputs or errors)."""
        import checker.kit.errormodel as errormodel

        if err.not_implemented or err.kind not in CRASHES or not err.text or err.call is None:
            return None  # (a convention the user's code follows, settle(), changes no error: none is looked for)
        args, how = err.call
        return self._rewrite_once(args, errormodel.Raised(err.kind, err.text), tol=None, outputs=None, same=None,
                                  run=None, crashes=True, **how)

    def _rewrite_once(self, args, got, *, tol, outputs, same, run, others=(), crashes=False, **how) -> str | None:
        """The error model where a check judges its own calls with its own comparison: a rewrite is said only when it
        is the one change that gives the user's result on args, and on each of others the user's code runs on. A call
        of one of the kata's cases (how: case=, dtype=) is joined by the kata's other cases, called the same way: a
        change that fits one case by a coincidence of its sizes (-2 // 4 equals -2 / 2 at d_rope = 4) is refuted
        on a case of other sizes. crashes: got is the error the user's code raised (errormodel.Raised), and an input
        where it raises counts with its error."""
        import checker.kit.errormodel as errormodel
        from checker.kit.diagnosis import Mistake

        if not self._may_search():
            return None
        target = how.get("target") or self.spec.TARGET
        split = (lambda v: as_outputs(v, outputs)) if outputs else (lambda v: v)

        # (arguments, how the reference is called, how the user's code is called) of each input
        calls = [(args, how, {}), *(() if run else ((other, how, {}) for other in others))]  # run: one input only
        if not run and not others and how.get("case") in self.options.CASES and set(how) <= {"case", "dtype"}:
            dtype = how.get("dtype", "float64")
            calls += [(self.inputs(c, dtype), {**how, "case": c}, {"case": c, "dtype": dtype})
                      for c in self.options.CASES if c != how["case"]]
        cases = [Case(i, {}) for i in range(len(calls))]
        seen = {0: got}
        for c in cases[1:]:
            inputs, _, called = calls[c.id]
            try:
                seen[c.id] = split(self.user(inputs, target=target, **called))
            except UserError as err:
                if crashes and not err.not_implemented and err.text:
                    seen[c.id] = errormodel.Raised(err.kind, err.text)
            except (Fail, ValueError, TypeError):
                pass  # an input the user's code cannot run predicts nothing

        def call(module, c):
            impl = getattr(module, target)
            inputs, reference_how, _ = calls[c.id]
            wrong = run(Mistake(name="rewrite", impl=impl, explain="")) if run else \
                self.reference(inputs, impl=impl, **reference_how)
            return split(wrong)

        def alike(mine, theirs):
            return bool(same(mine, theirs)) if same is not None else _all_match(mine, theirs, tol)

        fits = self._search(call, cases, seen, alike)
        # An error's text holds sizes only: any variable of the same shape read for another raises it as well, and a
        # change that fits beside such a read is no more likely than the read itself.
        if crashes and fits and any(r.rule == "variable" for change in fits for r in change):
            return None
        return self._said(fits, raised=crashes) if len(fits) == 1 else None

    def _reproduces(self, mistake, seen: Case, dtype: str, tol, outputs) -> bool:
        """A named mistake is a fact only where it gives the user's outputs on every case where they are wrong,
        not on one: a hard-coded eps equals 'the wrong default eps' until a case passes its own. Cases the user's
        code gets right or cannot run are left out; one the mistake cannot run where the user's code did
        refutes it."""
        split = (lambda v: as_outputs(v, outputs)) if outputs else (lambda v: v)
        for c in self.options.CASES:
            if c is seen:
                continue
            args = self.inputs(c, dtype)
            try:
                got = split(self.user(args, case=c, dtype=dtype))
                want = split(self.reference(args, case=c, dtype=dtype))
                if _all_match(got, want, tol) or _shapes(got) != _shapes(want):
                    continue  # right here, or wrong in form: the shape checks' business, not this mistake's
            except (UserError, ValueError, TypeError):  # the user's code raised, or returned another form
                continue
            try:
                with np.errstate(all="ignore"):
                    wrong = split(self.reference(args, impl=mistake.impl, case=c, dtype=dtype))
            except Exception:  # noqa: BLE001 - the mistake cannot run where the user's code did
                return False
            if not _all_match(got, wrong, tol, nan_predicts_nothing=True):
                return False
        return True


SAME_MISTAKE_TOL = (1e-5, 1e-6)  # (rtol, atol): a named mistake and the user's code, computed in another order


def _all_match(got, wrong, tol, *, nan_predicts_nothing: bool = False) -> bool:
    """Every value of got within tol of wrong's (one value, or tuples of the same length); with
    nan_predicts_nothing, where wrong (a hypothesis) is NaN it takes got's value."""
    several = isinstance(got, (tuple, list)) and isinstance(wrong, (tuple, list)) and len(got) == len(wrong)
    pairs = zip(got, wrong) if several else [(got, wrong)]
    return all(matches(u, _unknown_where_nan(w, u) if nan_predicts_nothing else w, tol) for u, w in pairs)


def _shapes(values) -> list:
    return [tuple(getattr(v, "shape", ())) for v in (values if isinstance(values, (tuple, list)) else [values])]


def _unknown_where_nan(hypothesis, got):
    """Where a hypothesis gives NaN it predicts nothing (a row no key can be seen in, filled with -inf, is another
    question than the mistake): there it takes the user's value."""
    if isinstance(hypothesis, torch.Tensor) and isinstance(got, torch.Tensor) and hypothesis.shape == got.shape \
            and hypothesis.is_floating_point() and got.dtype == hypothesis.dtype:
        return torch.where(torch.isnan(hypothesis), got, hypothesis)
    if isinstance(hypothesis, np.ndarray) and isinstance(got, np.ndarray) and hypothesis.shape == got.shape \
            and hypothesis.dtype.kind == "f" and got.dtype == hypothesis.dtype:
        return np.where(np.isnan(hypothesis), got, hypothesis)
    return hypothesis


def conventions(opts) -> tuple:
    """The conventions a kata accepts: its own, then float32 internals (the one policy, every kata)."""
    return (*opts.CONVENTIONS, FLOAT32_INTERNALS)


def _clone(args: tuple) -> tuple:
    """Copies, so that a call cannot change what the next one gets (a generator's state included)."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a.copy() if isinstance(a, np.ndarray)
                 else _copy_generator(a) if isinstance(a, torch.Generator) else a for a in args)


def _copy_generator(g: torch.Generator) -> torch.Generator:
    copy = torch.Generator(device=g.device)
    copy.set_state(g.get_state())
    return copy


def arg_names(kit: Kit, name: str | None = None) -> list[str]:
    target = getattr(kit.solution, name or kit.spec.TARGET)
    fn = target.forward if isinstance(target, type) else target
    return [p for p in inspect.signature(fn).parameters if p != "self"]
