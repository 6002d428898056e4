"""The checks every kata gets from its options: structure, shapes, numerics, gradients, dropout, batches."""

from __future__ import annotations


import numpy as np
import torch

from checker.lang import joined, t
from checker.errors import UserError
from checker.kit.authoring import Accepted, Case, Fail, FollowUp, check, options
from checker.kit.compare import dtype_diagnosis, float_tensor, floating, as_outputs, compare, matches, phrase
from checker.kit.crashes import DEVICE_MISMATCH, at_line, user_line
from checker.kit.proxy import Kit, arg_names, conventions
from checker.sandbox.world import world_key

# ----------------------------------------------------------------------------- standard checks


def expect_structure(kit: Kit, target: str, *, params: list[str] | None = None, forward: list[str] | None = None,
                     init=None, module: bool | None = None) -> dict:
    """The target exists, is the right kind, takes the documented parameters, has the reference's weights."""
    info = kit.inspect(target)
    if not info["exists"]:
        import difflib

        close = difflib.get_close_matches(target, info["names"], n=1, cutoff=0.6)
        hint = t(" Found '{name}': did you misname it?", name=close[0]) if close else (
            t(" The file defines: {names}.", names=", ".join(info["names"]) or t("nothing")))
        raise Fail(t("'{target}' is missing.{hint}", target=target, hint=hint),
                   t("the checker looks your code up by the exact name '{target}', which the file does not define",
                     target=target), general=True)
    if module is True and not info["is_module"]:
        raise Fail(t("'{target}' should be a class deriving from torch.nn.Module", target=target),
                   t("the checker builds it with its constructor's arguments and loads weights into it, which only a "
                     "torch.nn.Module subclass allows"), general=True)
    if module is False and (info["is_class"] or not info["callable"]):
        raise Fail(t("'{target}' should be a function", target=target),
                   t("the checker calls it directly with the inputs, as a plain function, not as a class to build"),
                   general=True)
    for hidden in info.get("shadowed", []):
        raise Fail(t("{target}.{name} takes ({got}), and hides nn.Module's own {name}({want}), which torch calls itself",
                     target=target, name=hidden["name"], got=", ".join(hidden["got"]), want=", ".join(hidden["want"])),
                   t("a method named as one of nn.Module's replaces it, and torch's own calls to it break (.to(), "
                     ".double() and .cpu() call _apply(fn); eval() calls train(False)): give your method another name"),
                   line=hidden["line"], general=True)
    # A constructor gets its arguments by keyword, so its names are the contract. forward and a
    # function get them by position: other names are the user's choice, unless they are the
    # contract's names in another order (Q and K swapped) or too few.
    for got, want, where, by_name in ((info["params"], params, f"{target}", info["is_class"]),
                                      (info.get("forward"), forward, f"{target}.forward", False)):
        if want is None or got is None or got[: len(want)] == want:
            continue
        if by_name or len(got) < len(want) or sorted(got[: len(want)]) == sorted(want):
            raise Fail(t("{where} should take ({want}), but takes ({got})", where=where, want=", ".join(want),
                         got=", ".join(got)),
                       t("the checker passes the documented arguments (by position, a constructor's by name), so "
                         "parameters missing, renamed or reordered receive the wrong values"), general=True)
    if init is not None and info["is_module"]:
        built = kit.inspect(target, init)
        reference = getattr(kit.solution, target)(**init)
        want_params = {n: list(p.shape) for n, p in reference.named_parameters()}
        got_params = built["parameters"]
        missing = [n for n in want_params if n not in got_params]
        if missing:
            shapes = ", ".join(f"{n} {tuple(want_params[n])}" for n in missing)
            raise Fail(t("{target}({init}) has no parameter {shapes}; it has {names}. The docstring names the "
                         "submodules the checker loads weights into", target=target, init=_kwargs(init), shapes=shapes,
                         names=", ".join(got_params) or t("none")),
                       _why_missing(missing, want_params, got_params), general=True)
        for n, shape in want_params.items():
            if got_params[n] != shape:
                raise Fail(t("parameter {name} should have shape {want}, got {got}", name=n, want=tuple(shape),
                             got=tuple(got_params[n])),
                           t("a weight is built with other sizes than the contract's: check the sizes passed to its "
                             "layer (nn.Linear(in, out) stores its weight as (out, in))"), general=True)
        extra = [n for n in got_params if n not in want_params]
        if extra:
            raise Fail(t("{target}({init}) has parameters the contract does not have: {names}", target=target,
                         init=_kwargs(init), names=", ".join(extra)),
                       t("the module holds weights the contract does not have, which the reference's weights cannot "
                         "fill: drop them or build them from the contract's submodules"), general=True)
    return info


def expect_raises(attempts, why: str, error: str = "ValueError") -> None:
    """What a contract says must raise is a requirement, judged one way in every kata. attempts: (call, run), call the
    user's call as a person writes it, run() making it, and a third item naming the function it calls where the
    attempts call more than one (a raise in one function says nothing of another's). Each must raise `error`: an assert fails too (it raises
    AssertionError, which the caller does not catch as {error}, and vanishes under `python -O`), as does another error
    or code that runs on. why: what goes wrong when such a call passes silently. Every call is made before the verdict:
    code that raises error for one of them and not for another has its raise, and tests another condition than the
    contract's; it is told so, not told to raise."""
    raised, wrong = {}, None  # the first call that raised error, by function; the first that did not: (call, err, fn)
    for call, run, *function in attempts:
        try:
            run()
        except UserError as err:
            if err.not_implemented:
                raise
            if err.kind == error:
                raised.setdefault(tuple(function), call)
                continue
            wrong = wrong or (call, err, tuple(function))
            continue
        wrong = wrong or (call, None, tuple(function))  # judged when every call has been made: another may raise
    if wrong is None:
        return
    call, err, function = wrong
    raised_for = raised.get(function)
    if err is not None and err.kind == "AssertionError":
        raise Fail(t("{call} raised AssertionError, where the contract says it raises {error}", call=call, error=error),
                   t("an assert stops the same call, but it raises AssertionError, not the {error} the contract "
                     "promises a caller, and `python -O` removes it: then {why}. Raise {error}(...)", error=error,
                     why=why), line=user_line(err))
    why = t("your code raises {error} for {other} but not here: the condition it tests is not the contract's (a count, "
            "a bound or a comparison computed otherwise)", error=error, other=raised_for) if raised_for else \
        t("{why}: raise {error}(...) for it", why=why, error=error)
    if err is not None:
        # why says what a call that passes silently does; this one stopped, with another error than the contract's
        why = why if raised_for else t(
            "a caller that catches the {error} the contract promises does not catch your {kind}: test the input "
            "yourself and raise {error}(...)", error=error, kind=err.kind)
        raise Fail(t("{call} raised {err}, where the contract says it raises {error}", call=call, err=err, error=error),
                   why, line=user_line(err))
    raise Fail(t("{call} raised no error, where the contract says it raises {error}", call=call, error=error), why)


def _why_missing(missing: list, want: dict, got: dict) -> str:
    """Which of three facts explains parameters the contract has and the user's module lacks: only biases,
    whose layers are there (bias=False); weights of the same shapes under other names; or neither."""
    def layer(name):
        return name.rpartition(".")[0]

    if all(n.rpartition(".")[2] == "bias" and f"{layer(n)}.weight".lstrip(".") in got for n in missing):
        return t("{layers} are built without a bias (bias=False), while the contract's have one, so the reference's "
                 "bias cannot be loaded: keep the layer's default bias=True",
                 layers=", ".join(layer(n) or n for n in missing))
    others = [n for n in got if n not in want]
    if any(got[o] == want[m] for o in others for m in missing):
        return t("the weights are registered under other names than the contract's, so the reference's weights "
                 "cannot be loaded into them: name the submodules as the docstring does")
    return t("no parameter of yours has these shapes under another name: the submodules are not built, or one "
             "module is assigned to two attributes (self.b = self.a shares one set of weights, which the module "
             "lists once): build each submodule the docstring names as its own module")


def _kwargs(init: dict) -> str:
    return ", ".join(f"{k}={v!r}" for k, v in init.items())


def standard_checks(spec) -> list:
    """Shapes on every case, numerics in float64 and float32, and hygiene: the same for every kata."""
    outputs, opts = spec.OUTPUTS, options(spec)

    def run_all(kit: Kit, dtype: str, stage_shapes_only: bool, tol=None, widened: list | None = None):
        """Compare every case. widened collects the NumPy outputs that came back float64 from float32
        inputs with the right values (np.sqrt(d_k) promotes under NumPy 2): a follow-up, not a failure."""
        for c in spec.CASES:
            value = kit.user(kit.inputs(c, dtype), case=c, dtype=dtype)
            expected = as_outputs(kit.reference(kit.inputs(c, dtype), case=c, dtype=dtype), outputs)
            try:
                got = as_outputs(value, outputs)
            except Fail as fail:
                raise Fail(t("{label}: {fail}", label=c.label, fail=fail)) from None
            try:
                for (name, legend), u, e in zip(outputs, got, expected):
                    shape_ok = isinstance(u, (torch.Tensor, np.ndarray)) and tuple(u.shape) == tuple(e.shape)
                    if widened is not None and isinstance(u, np.ndarray) and isinstance(e, np.ndarray) \
                            and u.dtype == np.float64 and e.dtype == np.float32:
                        widened.append((c, name))
                        u = u.astype(np.float32)
                    if not (stage_shapes_only and shape_ok):
                        compare(u, e, name, legend, tol=tol or kit.tolerance(dtype))
            except Fail as fail:
                message = t("{label}: {fail}", label=c.label, fail=fail.message)
                found = kit.diagnose(c, dtype, got)  # the error model knows shapes too: a keepdim, a transpose
                if found is None and floating(u) and floating(e) and u.shape == e.shape and u.dtype != e.dtype:
                    raise Fail(message, dtype_diagnosis(u, e), general=True) from None
                if found is None and fail.diagnosis:  # a class of mistake the comparison saw: a shape's relation
                    raise Fail(message, fail.diagnosis, general=fail.general) from None
                raise Fail(message, found, line=kit.divergence_line if found else None) from None

    def legends():
        return joined(t(" and "), (phrase(n) + " " + phrase(legend) if legend else phrase(n) for n, legend in outputs))

    @check("shapes", "returns {legends} on every case", legends=legends)
    def shapes(kit):
        run_all(kit, "float64", True)

    @check("numerics", "matches the reference in float64")
    def numerics64(kit):
        followed = kit.convention
        try:
            run_all(kit, "float64", False)
        except Fail:
            if followed is None and kit.settle() is not None:  # the search may have found it first
                run_all(kit, "float64", False)  # against the convention now, on every case
                raise Accepted(t(kit.convention.explain)) from None
            # Code that follows no convention: report a case where it is wrong beyond each convention's
            # tolerance (float32 internals), not the first case, which may differ by float32 rounding only.
            if kit.convention is None:
                for tol in [c.tol for c in conventions(kit.options) if c.tol is not None]:
                    run_all(kit, "float64", False, tol=tol)
            raise

    @check("numerics", "float32 in gives float32 out, close to the reference")
    def numerics32(kit):
        widened: list = []
        run_all(kit, "float32", False, widened=widened)
        if widened:
            c, name = widened[0]
            raise FollowUp(t("{label}: float32 inputs gave a float64 {name}, right in value. Follow-up: where does "
                             "the float64 come from, and why does it matter? Under NumPy 2 a NumPy float64 scalar "
                             "such as np.sqrt(d_k) or np.float64(eps) turns a float32 array into float64, which "
                             "doubles the memory and slows every later step: divide by math.sqrt(d_k), a Python "
                             "float, to keep the input's dtype", label=c.label, name=name))

    @check("hygiene", "leaves the caller's inputs unchanged")
    def hygiene(kit):
        for c in spec.CASES:
            sent = kit.inputs(c)
            _, after = kit.user(sent, case=c, return_args=True)
            for i, (before, now) in enumerate(zip(sent, after)):
                if isinstance(before, (torch.Tensor, np.ndarray)):
                    try:
                        compare(now, before, t("argument {number}", number=i + 1), exact=True)
                    except Fail as fail:
                        advice = (t("an in-place operation (x -= m, x[...] = ...) writes into the caller's array: "
                                    "compute a new one instead, x = x - m") if isinstance(before, np.ndarray)
                                  else t("an in-place operation (x += ..., masked_fill_, x[...] = ...) writes into the "
                                         "caller's tensor: compute a new one instead (x = x + ..., masked_fill)"))
                        raise Fail(t("{label}: your code modified its input ({fail})", label=c.label, fail=fail.message),
                                   advice, general=True) from None

    @check("gradients", "backward gives the reference's gradients for the inputs and every weight")
    def gradients(kit):
        for c in spec.CASES:
            expected_out = as_outputs(kit.reference(kit.inputs(c), case=c), outputs)
            g = c.generator(salt=23)
            cotangents = [torch.randn(e.shape, generator=g, dtype=e.dtype) for e in expected_out if float_tensor(e)]
            if not cotangents:
                raise Fail(t("the reference returns no float tensor to differentiate: set GRADIENTS = False"))
            want = kit.gradients(c, cotangents, user=False)
            got = kit.gradients(c, cotangents, user=True)
            names = [n for n, _ in zip(arg_names(kit), want["args"])]
            try:
                for name, u, e in zip(names, got["args"], want["args"]):
                    if e is not None:
                        if u is None:
                            raise Fail(t("no gradient reaches {name}: something detaches it from the graph", name=name))
                        compare(u, e, t("gradient of {name}", name=name), tol=kit.tolerance("float64"))
                for name, e in want["params"].items():
                    u = got["params"].get(name)
                    if e is not None:
                        if u is None:
                            raise Fail(t("no gradient reaches the weight {name}: is it used, and not detached?",
                                         name=name))
                        compare(u, e, t("gradient of {name}", name=name), tol=kit.tolerance("float64"))
            except Fail as fail:
                raise Fail(t("{label}: {fail}", label=c.label, fail=fail)) from None

    @check("properties", "tensors made inside follow the inputs' device (run on the meta device)",
           followup=opts.DEVICE == "followup")
    def device(kit):
        if not kit.makes_tensors:  # every tensor the code holds comes from its inputs: none can end up elsewhere
            try:
                kit.user(kit.inputs(spec.CASES[0]), case=spec.CASES[0])
            except UserError as err:
                if err.not_implemented:
                    raise  # a stub is not started, here as on the meta device
            return
        for c in spec.CASES:
            if any(isinstance(a, torch.Tensor) for a in kit.inputs(c)):
                _on_meta(kit, spec, c)

    def _on_meta(kit, spec, c):
        try:
            layout = kit.layout(kit.inputs(c), case=c)
        except UserError as err:
            if err.not_implemented and "meta" not in err.text.lower():  # not the meta device's own (.tolist())
                raise
            if not any(word in err.text for word in DEVICE_MISMATCH):
                return  # an operation the meta device lacks (data-dependent code): no verdict either way
            message = t("{label}, inputs on another device (meta): {error}", label=c.label,
                        error=f"{err.kind}: {err.text.splitlines()[0]}") + at_line(err)
            advice = t("a tensor made inside (a mask, positions, a constant) is created on the CPU whatever the "
                       "inputs' device: pass device=x.device (e.g. torch.ones(T, T, dtype=torch.bool, "
                       "device=x.device)) or use x.new_ones(...)")
            raise Fail(message, advice, general=True, line=user_line(err)) from None
        stray = [entry["device"] for entry in layout if entry and entry["device"] != "meta"]
        if stray:
            raise Fail(t("{label}: with every input on the meta device, your result came back on {device}",
                         label=c.label, device=stray[0]),
                       t("the result is built on a fixed device, not the inputs' one: create it with device=x.device "
                         "or from the inputs (x.new_zeros(...), torch.zeros_like(x))"), general=True)

    @check("properties", "one module called on two cases in a row gives each its own answer (nothing kept from the "
                         "first call)")
    def no_state_between_calls(kit):
        for a, b in _module_pairs(kit.spec)[:3]:
            for first, second in ((a, b), (b, a)):  # a table kept from the first call: too short one way, too long the other
                _second_call_right(kit, first, second)

    def _second_call_right(kit, first, second):
        from checker.checks.child.calls import second_call

        args = kit.inputs(second)
        want = as_outputs(kit.reference(args, case=second), outputs)
        fresh = as_outputs(kit.user(args, case=second), outputs)
        if not all(matches(u, e, kit.tolerance("float64")) for u, e in zip(fresh, want)):
            return  # wrong on its own already: the numerics checks say how
        state = kit.state(second, "float64")
        try:
            value = kit.drive(second_call, opts.TARGET, kit.init(second), state, kit.inputs(first), args)
        except UserError as err:
            raise Fail(t("{label}, called after {first} on the same module: your code raised {error}{where}",
                         label=second.label, first=first.label, error=err, where=at_line(err)), t(_KEPT),
                       line=user_line(err)) from None
        got = as_outputs(value, outputs)
        for (name, legend), u, e in zip(outputs, got, want):
            try:
                compare(u, e, name, legend, tol=kit.tolerance("float64"))
            except Fail as fail:
                raise Fail(t("{label}, called after {first} on the same module: {fail}", label=second.label,
                             first=first.label, fail=fail.message), t(_KEPT)) from None

    @check("properties", "the contract's smallest batch: a batch of 1 gives the reference's result")
    def smallest_sizes(kit):
        for original in spec.CASES[:2]:
            c = _resized(spec, original, 1)
            try:
                right = c is not None and all(matches(u, e, kit.tolerance("float64")) for u, e in zip(
                    as_outputs(kit.user(kit.inputs(original), case=original), outputs),
                    as_outputs(kit.reference(kit.inputs(original), case=original), outputs)))
            except Fail:
                right = False
            if not right:
                continue  # wrong on the ordinary case already: the numerics checks say how
            args = kit.inputs(c)
            try:
                want = as_outputs(kit.reference(args, case=c), outputs)
            except Exception:  # noqa: BLE001 - sizes the reference itself does not take are not the contract's
                continue
            got = as_outputs(kit.user(args, case=c), outputs)
            for (name, legend), u, e in zip(outputs, got, want):
                try:
                    compare(u, e, name, legend, tol=kit.tolerance("float64"))
                except Fail as fail:
                    raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message),
                               t("right on the ordinary cases, wrong with a batch of 1: a squeeze() that drops the batch "
                                 "axis too, or a shape read from the wrong axis"), general=True) from None

    checks = [shapes, numerics64, hygiene] + ([numerics32] if opts.FLOAT32 else [])
    if _resized(spec, spec.CASES[0], 1) is not None:
        checks.append(smallest_sizes)
    if spec.__name__.startswith("checker.checks.torch_") and _module_pairs(spec):
        checks.append(no_state_between_calls)

    @check("numerics", "bfloat16 in gives bfloat16 out, as the reference does")
    def half_precision(kit):
        c = spec.CASES[0]
        try:
            args = kit.inputs(c, "bfloat16")
            want = as_outputs(kit.reference(args, case=c, dtype="bfloat16"), outputs)
        except Exception:  # noqa: BLE001 - a kata whose inputs or reference do not take bfloat16 says nothing here
            return
        if not any(isinstance(a, torch.Tensor) and a.dtype == torch.bfloat16 for a in args):
            return
        try:
            got = as_outputs(kit.user(args, case=c, dtype="bfloat16"), outputs)
        except UserError as err:
            if err.not_implemented:
                raise
            return  # an operation without a bfloat16 kernel on the CPU (complex numbers): the dtype is what is judged
        for (name, _), u, e in zip(outputs, got, want):
            if isinstance(u, torch.Tensor) and isinstance(e, torch.Tensor) and e.dtype == torch.bfloat16 \
                    and u.dtype != e.dtype:
                raise Fail(t("{label}: bfloat16 inputs gave {name} as {got}, where the reference's is torch.bfloat16",
                             label=c.label, name=name, got=str(u.dtype)),
                           t("something made inside is float32 (a table of angles or frequencies, a mask, a constant "
                             "tensor) and promotes the result: cast what you make to the input's dtype "
                             "(.to(x.dtype), .type_as(x)), as Hugging Face does after computing in float32"),
                           general=True)

    takes_tensors = any(isinstance(a, torch.Tensor) for c in spec.CASES for a in spec.inputs(c, "float64"))
    if spec.__name__.startswith("checker.checks.torch_") and opts.HALF and takes_tensors:
        checks.append(half_precision)
    if spec.__name__.startswith("checker.checks.torch_") and opts.DEVICE and takes_tensors:
        checks.append(device)
    if spec.__name__.startswith("checker.checks.torch_") and opts.GRADIENTS:
        checks.append(gradients)
    if opts.DROPOUT:
        checks += dropout_checks(spec)
    if opts.PARTS:
        checks.append(calls_per_part(spec))
    if opts.BATCH_INDEPENDENT:
        checks.append(batch_independence(spec))
    return checks


_KEPT = ("your module answers right when it is new, and wrong once it has been called on another input: it keeps "
         "something from the first call (a mask, a table or a cache stored on self): build it from each call's input, "
         "or make it once for the longest length (a buffer sized max_len) and slice it")


def same_object_check(spec):
    """A function kata whose inputs hold a model or an optimizer: called twice in a row on the same object, with
    another case's inputs first, the second call gives what a call on a fresh object gives. None for other katas."""
    opts = options(spec)
    # Katas without OUTPUTS (beam search, speculative decoding) hand stand-in models tied to their own case (its BOS,
    # its budget of calls): another case's inputs on them are refused or run out of time, so they are left out.
    if not opts.TARGET or opts.OUTPUTS is None or getattr(spec, "init", None) is not None or len(opts.CASES) < 2:
        return None
    try:
        if not _object_positions(spec.inputs(opts.CASES[0], "float64")):
            return None
    except Exception:  # noqa: BLE001 - a kata whose cases are built by its checks
        return None

    @check("properties", "a function called twice in a row on the same model or optimizer gives the second call its "
                         "own answer (nothing kept on the object from the first call)")
    def same_object_between_calls(kit):
        from checker.checks.child.calls import same_object_twice

        cases = opts.CASES
        for a, b in [(cases[i], cases[i + 1]) for i in range(len(cases) - 1)] + [(cases[-1], cases[0])]:
            first, second = list(kit.inputs(a)), list(kit.inputs(b))
            for i in _object_positions(second):
                first[i] = second[i]  # one object: pickled in one request, it stays one in the child
            try:
                reply = kit.drive(same_object_twice, opts.TARGET, tuple(first), tuple(second))
            except UserError as err:
                if err.not_implemented:
                    raise
                kit.user(kit.inputs(b), case=b)  # raises on a fresh object too: that error is the other checks' business
                raise Fail(t("{label}, called right after {first} with the same {objects}: your code raised {error}{where}; "
                             "on a fresh one it does not", label=b.label, first=a.label, objects=_objects(second),
                             error=err, where=at_line(err)), t(_KEPT_ON_OBJECT), line=user_line(err)) from None
            if "first" in reply:
                continue  # the first call raised on its own: the other checks say why
            fresh = kit.user(kit.inputs(b), case=b)
            if not _same_value(reply["value"], fresh, kit.tolerance("float64")):
                objects = _objects(second)
                if opts.OUTPUTS is not None:
                    for (name, legend), u, e in zip(opts.OUTPUTS, as_outputs(reply["value"], opts.OUTPUTS),
                                                    as_outputs(fresh, opts.OUTPUTS)):
                        try:
                            compare(u, e, name, legend, tol=kit.tolerance("float64"))
                        except Fail as fail:
                            raise Fail(t("{label}, called right after {first} with the same {objects}: {fail}; on a "
                                         "fresh one it gives the expected value", label=b.label, first=a.label,
                                         objects=objects, fail=fail.message), t(_KEPT_ON_OBJECT)) from None
                raise Fail(t("{label}, called right after {first} with the same {objects}: your code returns {got}; on "
                             "a fresh one it returns {fresh}", label=b.label, first=a.label, objects=objects,
                             got=_short(reply["value"]), fresh=_short(fresh)), t(_KEPT_ON_OBJECT))

    return same_object_between_calls


def _same_value(a, b, tol) -> bool:
    if isinstance(a, (torch.Tensor, np.ndarray)) or isinstance(b, (torch.Tensor, np.ndarray)):
        return matches(a, b, tol)
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        return len(a) == len(b) and all(_same_value(x, y, tol) for x, y in zip(a, b))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same_value(a[k], b[k], tol) for k in a)
    if isinstance(a, float) and isinstance(b, float):
        return abs(a - b) <= 1e-9 + 1e-7 * abs(b)
    return a == b


def _short(value, limit: int = 160) -> str:
    text = repr(value.tolist() if isinstance(value, (torch.Tensor, np.ndarray)) else value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


_KEPT_ON_OBJECT = ("your function answers right on a new model, and wrong on one it was already called with: it keeps "
                   "something on the object from the first call (an encoded source, a cache, a step count stored as an "
                   "attribute): compute it from each call's inputs, or key it by them")


def _object_positions(args) -> list[int]:
    """Where a function kata's arguments hold a model or an optimizer: objects a caller reuses across calls."""
    return [i for i, a in enumerate(args) if isinstance(a, (torch.nn.Module, torch.optim.Optimizer))]


def _objects(args) -> str:
    kinds = [t("optimizer") if isinstance(a, torch.optim.Optimizer) else t("model") for a in args
             if isinstance(a, (torch.nn.Module, torch.optim.Optimizer))]
    return joined(t(" and "), kinds)


def _module_pairs(spec) -> list:
    """Pairs of cases that build the same module (the same init) for other inputs (other lengths, other masks). A kata
    whose cases all build different modules gets, for its first three cases, the same case with its lengths and batch
    two longer: the same module called on inputs of another size."""
    make = getattr(spec, "init", None)
    if make is None:
        return []
    pairs = [(a, b) for i, a in enumerate(spec.CASES) for b in spec.CASES[i + 1:] if _same_init(make(a), make(b))]
    return pairs or [(c, longer) for c in spec.CASES[:3] for longer in [_longer(spec, c)] if longer is not None]


def _same_init(a: dict, b: dict) -> bool:
    """Two constructors' arguments build the same module: equal values, and given modules (a base layer, a layer to
    stack) of one type with equal weights."""
    def same(x, y):
        if isinstance(x, torch.nn.Module) or isinstance(y, torch.nn.Module):
            if type(x) is not type(y):
                return False
            mine, theirs = x.state_dict(), y.state_dict()
            return mine.keys() == theirs.keys() and all(torch.equal(mine[k], theirs[k]) for k in mine)
        return x == y

    return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)


def _resized(spec, c: Case, size: int) -> Case | None:
    """c with its batch B set to size (None where c has no batch, or it is that size already). Lengths are left
    alone: a length of 1 with a padding mask hides whole rows, which the katas' conventions judge on their own."""
    return None if c.dims.get("B", size) == size else _sized(spec, c, {"B": size})


def _longer(spec, c: Case) -> Case | None:
    """c with every length (T, T_q, T_k, ...) and its batch B two longer."""
    return _sized(spec, c, {k: v + 2 for k, v in c.dims.items() if k == "B" or k == "T" or k.startswith("T_")})


def _sized(spec, c: Case, sizes: dict) -> Case | None:
    """c with these sizes, where that builds the same module (or the kata builds none) and the kata can make inputs
    for it; else None."""
    if not sizes:
        return None
    other = Case(c.id, {**c.dims, **sizes}, c.extra)
    try:
        if getattr(spec, "init", None) is not None and not _same_init(spec.init(other), spec.init(c)):
            return None
        spec.inputs(other, "float64")
    except Exception:  # noqa: BLE001 - sizes the kata's inputs cannot take (a table of max_len rows)
        return None
    return other


def dropout_elsewhere() -> str:
    """The diagnosis of a dropout that acts beyond the sublayer outputs."""
    return t("dropout in the wrong place: it hits x, a residual sum or a normalized output, not only the sublayer outputs")


def dropout_missing() -> str:
    """The diagnosis of a sublayer output that training does not drop out."""
    return t("dropout in the wrong place: a sublayer output is not dropped out in training")


def calls_per_part(spec):
    """No given sub-part is called more often than the reference calls it (one forward pass)."""

    @check("properties", "each given part (attention, norm, FFN, ...) is called no more often than in the reference")
    def calls(kit):
        for c in _each_setting(spec.CASES)[:3]:  # a path taken in one setting only (pre-LN) counts its own calls
            _calls_once(kit, c)

    def _calls_once(kit, c):
        want, got = kit.recorded_calls(c)
        for part in [p for p in kit.options.PARTS if p not in kit.options.LOOPED_PARTS]:
            expected, actual = sum(w[0] == part for w in want), sum(g[0] == part for g in got)
            if actual > expected:
                extra = [g for g in got if g[0] == part][expected]
                raise Fail(t("{label}: {part} is called {actual} time(s) in one forward pass; the reference calls it "
                             "{expected} time(s): each sublayer runs once where the paper's figure has it (a second "
                             "call costs time and, with dropout, draws a second mask)", label=c.label, part=part,
                             actual=actual, expected=expected),
                           t("{part} is called more often than in the reference: the extra call is on line {line}",
                             part=part, line=extra[3]) if extra[3] else
                           t("{part} is called more often than in the reference", part=part), line=extra[3])

    return calls


def _each_setting(cases) -> list:
    """The first case of each distinct set of settings (pre-LN and post-LN; a mask and none), in order."""
    seen, firsts = [], []
    for c in cases:
        if c.extra not in seen:
            seen.append(c.extra)
            firsts.append(c)
    return firsts


def batch_independence(spec):
    """Changing batch item 0 of every input leaves the outputs of the other items unchanged."""

    @check("properties", "batch items are independent: changing item 0 leaves the others unchanged")
    def independent(kit):
        c = next(c for c in spec.CASES if c.dims.get("B", 1) > 1)
        args = kit.inputs(c)
        changed = tuple(_perturb_first_item(a, c.B) for a in args)
        before = as_outputs(kit.user(args, case=c), spec.OUTPUTS)
        after = as_outputs(kit.user(changed, case=c), spec.OUTPUTS)
        for (name, _), b, a in zip(spec.OUTPUTS, before, after):
            if isinstance(b, (torch.Tensor, np.ndarray)) and b.ndim and b.shape[0] == c.B:
                try:
                    compare(a[1:], b[1:], name, tol=kit.tolerance("float64"))
                except Fail as fail:
                    raise Fail(t("{label}: changing batch item 0 changed the {name} of other items ({fail}); "
                                 "something mixes the batch axis (a reshape or transpose across B?)", label=c.label,
                                 name=name, fail=fail)) from None

    return independent


def any_leading_axes(base: Case, others) -> object:
    """A check for modules that act on the last axis: inputs of other ranks (the cases in others) work too."""

    @check("shapes", "any leading axes work: (T, D) and (B, N, T, D) inputs as well as (B, T, D)")
    def any_rank(kit):
        kit.user(kit.inputs(base), case=base)  # rank 3 first: if this raises, the error is not about the rank
        for c in others:
            try:
                kit.user(kit.inputs(c), case=c)
            except UserError as err:
                if err.not_implemented:
                    raise
                rank = len(kit.inputs(c)[0].shape)
                raise Fail(t("{label}: your code works on a (B, T, D) input but raised {error}{where} on a rank-{rank} "
                             "input", label=c.label, error=err, where=at_line(err), rank=rank),
                           t("the code assumes exactly three axes (B, T, D = x.shape, or a reshape to (B * T, D)), but "
                             "the network acts on the last axis only and nn.Linear accepts any leading axes: leave the "
                             "leading axes as they come"), general=True, line=user_line(err)) from None

    return any_rank


def _perturb_first_item(a, batch: int):
    if isinstance(a, torch.Tensor) and a.is_floating_point() and a.ndim and a.shape[0] == batch:
        a = a.clone()
        a[0] = a[0] * -1.5 + 0.25
    elif isinstance(a, np.ndarray) and a.dtype.kind == "f" and a.ndim and a.shape[0] == batch:
        a = a.copy()
        a[0] = a[0] * -1.5 + 0.25
    return a


def dropout_checks(spec) -> list:
    """For modules taking `dropout`: it acts in training only, and it does act."""
    c = spec.CASES[0]

    def with_dropout():
        return {**spec.init(c), "dropout": 0.5}

    # Both compare the user's module with itself at dropout=0.0, so a numeric mistake elsewhere
    # (already reported by the numerics checks) does not read as a dropout mistake.
    @check("properties", "dropout is off in eval mode: dropout=0.5 in eval gives the dropout=0.0 result")
    def dropout_eval(kit):
        args = kit.inputs(c)
        plain = as_outputs(kit.user(args, case=c), spec.OUTPUTS)
        got = as_outputs(kit.user(args, case=c, init=with_dropout()), spec.OUTPUTS)
        try:
            for (name, legend), u, e in zip(spec.OUTPUTS, got, plain):
                compare(u, e, name, legend, tol=kit.tolerance("float64"))
        except Fail as fail:
            raise Fail(t("{label}, eval mode, dropout=0.5 vs dropout=0.0: {fail}", label=c.label, fail=fail),
                       t("the dropout rate still changes the result after .eval(): a dropout that ignores the mode "
                         "(F.dropout(x, p) without self.training, or a mask of your own) keeps dropping; use "
                         "nn.Dropout, or F.dropout(x, p, self.training)")) from None

    @check("properties", "dropout acts in training mode: dropout=0.5 in train mode changes the result")
    def dropout_train(kit):
        args = kit.inputs(c)
        plain = as_outputs(kit.user(args, case=c), spec.OUTPUTS)
        trained = as_outputs(kit.user(args, case=c, init=with_dropout(), train=True), spec.OUTPUTS)
        if all(matches(u, e, kit.tolerance("float64")) for u, e in zip(trained, plain)):
            raise Fail(t("{label}: with dropout=0.5 in training mode the result equals the result without dropout",
                         label=c.label),
                       t("the dropout rate has no effect in training mode: nothing the result depends on goes through "
                         "self.dropout; apply it where the contract says"))

    @check("properties", "dropout acts on the attention weights, not on the output")
    def dropout_on_weights(kit):
        args = kit.inputs(c)
        (plain, *_) = as_outputs(kit.user(args, case=c), spec.OUTPUTS)
        (trained, *_) = as_outputs(kit.user(args, case=c, init=with_dropout(), train=True), spec.OUTPUTS)
        if isinstance(plain, torch.Tensor) and isinstance(trained, torch.Tensor) and plain.shape == trained.shape:
            zeroed = float(((trained == 0) & (plain != 0)).double().mean())
            # Dropout on the weights leaves almost no output element exactly 0; on the output, about p of them.
            if zeroed > 0.2:
                raise Fail(t("{label}: with dropout=0.5 in training mode {share:.0%} of the output elements are exactly "
                             "0: dropout is applied to the output; the contract applies it to the attention weights, "
                             "before they multiply V (self.dropout(weights) @ V)", label=c.label, share=zeroed),
                           t("dropout in the wrong place: on the attention output, not on the weights"))

    @check("properties", "the dropout rate is the one passed: dropout=0.2 and dropout=0.6 drop differently in training")
    def dropout_rate_used(kit):
        from checker.checks.child.calls import seeded_calls
        from checker.kit.diagnosis import identical

        args, state = kit.inputs(c), kit.state(c, "float64")
        inits = [{**spec.init(c), "dropout": 0.2}, {**spec.init(c), "dropout": 0.6}]
        with torch.random.fork_rng(devices=[]), torch.no_grad():  # the reference runs here: no graph, no change to
            # the checker's own generator
            if identical(*seeded_calls(kit.solution, spec.TARGET, inits, state, args)):
                return  # this case draws nothing the rate decides
        if identical(*kit.drive(seeded_calls, spec.TARGET, inits, state, args)):
            raise Fail(t("{label}: dropout=0.2 and dropout=0.6 give exactly the same result in training mode, where "
                         "the reference's differ: your code does not use its dropout argument", label=c.label),
                       t("the dropout rate is written into the code (nn.Dropout(0.1)): build the dropout from the "
                         "argument, nn.Dropout(dropout)"))

    return [dropout_eval, dropout_train, dropout_rate_used] + ([dropout_on_weights] if spec.DROPOUT == "weights" else [])


# ----------------------------------------------------------------------------- the caller's world


def world_check(source: str):
    """Every kata: no call of the user's code leaves its caller's world changed (checker.sandbox.world: grad
    mode, the default dtype, torch's thread count, the training flags and requires_grad of the modules it is handed,
    the global generators), except what the reference changes too, which is the contract's. The child puts each
    change back after the call, so the checks after it ran in the world they expected."""

    @check("hygiene", "leaves the caller's world as it was (grad mode, default dtype, threads, training flags, "
                      "requires_grad, the global random state, the tensors it is handed)")
    def caller_world(kit):
        spec = kit.spec
        if getattr(spec, "OUTPUTS", None) is not None:
            for c in spec.CASES:  # what the contract changes on any case (dropout draws in training only)
                try:
                    kit.reference(kit.inputs(c), case=c)
                except Exception:  # noqa: BLE001 - a kata whose checks call its target in other ways
                    pass
        changed = [c for c in kit.sandbox.request("world")["value"]
                   if world_key(c, c["target"]) not in kit.contract_changes
                   and not (c["kind"] == "rng" and kit.options.DRAWS)
                   and not (c["kind"] == "inputs" and c["owner"] in kit.options.WRITES.get(c["target"], ()))
                   and not (c["kind"] == "inputs" and c["target"] == spec.TARGET and spec.OUTPUTS is not None)]
        if not changed:
            return
        lines = [_world_line(source, c["kind"]) for c in changed]
        said = joined("; ", (_world_change(c, line) for c, line in zip(changed, lines)))
        first = next((line for line in lines if line), None)
        raise Fail(t("{changes}: a call must leave its caller's world as it found it", changes=said),
                   _world_advice(changed[0]["kind"]), general=True, line=first and first[0])

    caller_world.static = True  # an unwritten stub changes nothing either: passing it is not progress
    return caller_world


_WORLD_NAMES = {  # the calls that can make each kind of change, found in the source for the report's line
    "grad": {"set_grad_enabled", "_set_grad_enabled", "__enter__"},
    "dtype": {"set_default_dtype", "set_default_tensor_type"},
    "threads": {"set_num_threads", "set_num_interop_threads"},
    "training": {"eval", "train"},
    "requires_grad": {"requires_grad_", "requires_grad"},
    "rng": {"manual_seed", "seed", "set_rng_state", "rand", "randn", "randint", "randperm", "rand_like", "randn_like",
            "randint_like", "multinomial", "bernoulli", "normal", "normal_", "uniform_", "exponential_", "random_",
            "dropout", "shuffle", "choice", "random", "permutation", "uniform", "set_state", "default_rng"},
}


def _world_line(source: str, kind: str) -> tuple[int, str] | None:
    """(line, code) of the first call in the source that can make this kind of change, or None."""
    import ast

    try:
        tree = ast.parse(source)
    except SyntaxError:
        return None
    names, lines = _WORLD_NAMES.get(kind, ()), source.splitlines()
    parameters = {a.arg for f in ast.walk(tree) if isinstance(f, (ast.FunctionDef, ast.Lambda)) for a in f.args.args}
    for loop in [n for n in ast.walk(tree) if isinstance(n, ast.For)]:  # for s in lses, for o, s in zip(outs, lses)
        over = loop.iter.args if isinstance(loop.iter, ast.Call) and isinstance(loop.iter.func, ast.Name) and \
            loop.iter.func.id in ("zip", "enumerate", "reversed") else [loop.iter]
        if any(isinstance(e, ast.Name) and e.id in parameters for e in over):
            parameters |= {e.id for e in ast.walk(loop.target) if isinstance(e, ast.Name)}
    found = []
    for node in ast.walk(tree):
        name = None
        if isinstance(node, ast.Call) and not any(k.arg == "generator" for k in node.keywords):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
        elif kind == "requires_grad" and isinstance(node, ast.Assign):
            name = next((a.attr for a in node.targets if isinstance(a, ast.Attribute)), None)
        if name in names:
            found.append((0, node.lineno))
        elif kind in ("inputs", "list") and _writes_into_a_parameter(node, parameters):  # x -= m: an int parameter's too
            found.append((int(isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name)), node.lineno))
    if not found:
        return None
    line = min(found)[1]
    node = min((n for n in ast.walk(tree) if isinstance(n, ast.stmt) and n.lineno == line), key=lambda n: n.col_offset,
               default=None)
    code = ast.get_source_segment(source, node) if node is not None else None  # the statement, not its comment
    return line, (code or lines[line - 1]).splitlines()[0].strip() if 0 < line <= len(lines) else ""


def _writes_into_a_parameter(node, parameters: set) -> bool:
    """x -= ..., x[i] = ..., x[i] += ..., x.add_(...), x[i].masked_fill_(...) where x is a function's parameter: a
    write into what the caller handed over (a local of the same name in another function may be met too)."""
    import ast

    def handed(e):
        while isinstance(e, ast.Subscript):
            e = e.value
        return isinstance(e, ast.Name) and e.id in parameters

    if isinstance(node, ast.AugAssign):
        return handed(node.target)
    if isinstance(node, ast.Assign):
        return any(isinstance(a, ast.Subscript) and handed(a) for a in node.targets)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
        attr = node.func.attr
        return attr.endswith("_") and not attr.startswith("_") and attr != "requires_grad_" and handed(node.func.value)
    return False


def _world_change(change: dict, line) -> str:
    """One change, in a sentence: what it was before the call, what it is after, and the line that can do it."""
    target, before, after = change["target"], change["before"], change["after"]
    where = t(" (line {line}: {code})", line=line[0], code=line[1]) if line else ""
    kind = change["kind"]
    if kind == "grad":
        return t("grad mode was {before} before the call of {target} and is {after} after it{where}", target=target,
                 before=t("on") if before else t("off"), after=t("on") if after else t("off"), where=where)
    if kind == "dtype":
        return t("the default dtype was {before} before the call of {target} and is {after} after it{where}",
                 target=target, before=before, after=after, where=where)
    if kind == "threads":
        return t("torch's thread count was {before} before the call of {target} and is {after} after it{where}",
                 target=target, before=before, after=after, where=where)
    if kind == "rng":
        generator = {"torch": "torch", "numpy": "NumPy"}.get(change["name"]) or t("Python's random")
        return t("the call of {target} moved {generator}'s global random state, which this kata's contract never "
                 "draws from{where}", target=target, generator=generator, where=where)
    owner, name = change["owner"], change["name"]
    if kind == "list":
        return t("the call of {target} changed the list handed as argument {number}{item}: the caller's list holds "
                 "other tensors now{where}", target=target, number=owner,
                 item=t(" (item {index} replaced)", index=name) if name else t(" (items added or taken out)"),
                 where=where)
    if kind == "inputs":
        return t("the call of {target} wrote into argument {number}{item}, a tensor of its caller's{where}",
                 target=target, number=owner, item=t(" (item {index} of the list)", index=name) if name else "",
                 where=where)
    if owner == 0:
        what = t("the module {name}", name=name) if name else t("the module")
    else:
        what = (t("{name} of the model handed as argument {number}", name=name, number=owner) if name
                else t("the model handed as argument {number}", number=owner))
    if kind == "training":
        return t("{what} was in {before} mode before the call of {target} and is in {after} mode after it{where}",
                 what=what, before="train" if before else "eval", after="train" if after else "eval", target=target,
                 where=where)
    return t("requires_grad of the parameter {name} was {before} before the call of {target} and is {after} after "
             "it{where}", name=name if owner == 0 else t("{name} of argument {number}", name=name, number=owner),
             before=before, after=after, target=target, where=where)


def _world_advice(kind: str) -> str:
    return {
        "grad": t("a mode set by torch.set_grad_enabled(False) stays set for everything that runs after your code, the "
                  "caller's training included: decorate the function with @torch.no_grad(), or put the loop under "
                  "`with torch.no_grad():`, which put the mode back on the way out"),
        "dtype": t("torch.set_default_dtype changes the dtype of every tensor the caller makes afterwards: give the "
                   "dtype to the tensors you make (dtype=x.dtype) instead"),
        "threads": t("torch.set_num_threads changes the whole process: leave the thread count to the caller"),
        "training": t("the module's training flag belongs to its caller: a module does not switch itself to train or "
                      "eval mode in forward, and a function switches only what its contract says it switches"),
        "requires_grad": t("which weights train is the caller's choice: freeze parameters when the module is built, "
                           "as the contract says, never in a call"),
        "rng": t("seeding or drawing from the global generator changes what the caller's next random numbers are: "
                 "draw from the generator you are given (generator=...), or from none if the contract draws nothing"),
        "list": t("an assignment into the list you were handed (lses[i] = ..., append, pop) changes the caller's list, "
                  "which the caller may use again: build a new list ([s - m for s in lses]) or torch.stack it first"),
        "inputs": t("an in-place operation (x -= m, x[...] = ..., masked_fill_, a list's tensor changed) writes into "
                    "the caller's tensor, which the caller may use again: compute a new one instead (x = x - m, "
                    "torch.stack of the list, masked_fill)"),
    }[kind]
