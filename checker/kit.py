"""What hidden checks are written with: cases, the one tensor comparison, and the user proxy.

A kata's check module (checker/checks/TRACK_NAME.py) sets the options declared in `Options`
below (TARGET, CASES, OUTPUTS, MISTAKES, ...), defines
    inputs(case, dtype) -> tuple of positional arguments (seeded: same case, same values)
    init(case)   -> constructor kwargs for a module kata; absent for a function kata
and any number of extra checks decorated with @check(stage, title). Its own constants start with
an underscore: a public UPPERCASE name that is not an option is a misspelling, and the project's
tests say so (tests/test_catalogue.py, through unknown_options).

Everything a check does to the user's code goes through the Kit it is handed: user(), drive(),
inspect(), layout(). No check module touches the sandbox.
"""

from __future__ import annotations

import ast
import math
import re
import time
from dataclasses import dataclass, field, fields
from pathlib import Path

import numpy as np
import torch

from checker.lang import register, say, speaking, spoken, t
from checker.results import STAGES
from checker.sandbox import CHILD_PACKAGE, Opaque, UserError

# Tolerances. Two correct implementations differ only in rounding order (matmul vs einsum,
# -inf vs -1e9, fused vs separate ops). In float64 that is ~1e-15 relative; 1e-9 leaves six
# orders of magnitude of headroom, while every real mistake (a missing scale, a swapped axis)
# moves results by more than 1e-3.
RTOL_F64, ATOL_F64 = 1e-9, 1e-10
# In float32 (eps 1.2e-7) sums over a few dozen terms and an exp() lose a few ulps.
RTOL_F32, ATOL_F32 = 1e-4, 1e-5

DTYPES = {"float64": torch.float64, "float32": torch.float32}
# How PyTorch words an operation that mixes devices (checked with torch 2.x on the meta device).
DEVICE_MISMATCH = ("same device", "expected device", "device type", "on the expected device", "Expected all tensors")


class Fail(Exception):
    """A check's verdict: what is wrong, in one or two sentences, and the named mistake if one fits.

    The diagnosis (a Mistake's explanation) is shown after the message and becomes the report's
    diagnosis when no earlier check named one.
    """

    def __init__(self, message: str, diagnosis: str | None = None, *, general: bool = False, line: int | None = None,
                 column: int | None = None):
        super().__init__(message)
        self.message, self.diagnosis, self.line, self.column = message, diagnosis, line, column
        self.general = general  # a class of mistake (in place, CPU tensor, dtype): a named one wins over it

    def __str__(self) -> str:
        return t("{message}. Diagnosis: {diagnosis}", message=self.message, diagnosis=self.diagnosis) \
            if self.diagnosis else self.message


class FollowUp(Exception):
    """Raised by a check: the code is accepted, and this is the question an interviewer would ask next."""

    kind = "followup"


class Accepted(FollowUp):
    """Raised by a check: the code follows a convention of a primary source; says which, and what the
    kata's reference does instead."""

    kind = "variant"


@dataclass(frozen=True)
class Convention:
    """An accepted variant of the whole computation, recognised on every case before the checks run.

    impl replaces the reference for every later comparison (None: the reference itself), and tol the
    float64 tolerance (float32 internals on float64 input). explain says what was recognised and what
    this kata's reference does instead. A convention with a tol must leave every named mistake outside
    it on some case (tests/test_catalogue.py holds each kata to that), so accepting it opens no door.
    """

    name: str
    explain: str
    impl: object = None
    tol: tuple | None = None


# float32 arithmetic inside, float64 in and out: sums of a few dozen terms and an exp() in float32.
FLOAT32_INSIDE = (1e-5, 1e-6)


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
    return f"{size} ({', '.join(names)})" if names and len(names) <= 3 else str(size)


def _sizes(text: str) -> list[int]:
    return [int(n) for n in re.findall(r"-?\d+", text)]


def crash_diagnosis(err: UserError) -> str | None:
    """What a shape error the user's code raised means in the case's own dimension names, at their line.

    Only the sizes the error names are read: a size that matches several dimensions names them all."""
    case, text = err.case, err.message or ""
    if "view size is not compatible with input tensor's size and stride" in text:
        return t("view() needs the tensor's memory in order, and a transpose or permute before it leaves it out of "
                 "order: call .contiguous() before .view(...), or use .reshape(...)")
    if "axes don't match array" in text:
        return t("the transpose lists another number of axes than the array has there: the array's rank is not what "
                 "the code assumes; swap only the axes you mean (np.swapaxes(x, -1, -2))")
    if not isinstance(case, Case) or not case.dims:
        return None
    dims, line = case.dims, user_line(err)
    where = t("line {line}", line=line) if line else t("your code")
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
        return t("{where} asks for the shape ({shape}) from a tensor of {total} elements, which that shape cannot "
                 "hold: build the new shape from the sizes the tensor has there, and check which axis holds what",
                 where=where, shape=shown, total=named(total))
    if "could not be broadcast together" in text:  # einsum's remapped shapes hold 'newaxis': only the originals
        shapes = [tuple(_sizes(s)) for s in re.findall(r"\(([\d,]+)\)", text.split("shapes", 1)[-1])]
        shown = t(" and ").join("(" + ", ".join(named(n) for n in s) + ")" for s in shapes)
        return t("{where} combines arrays of shapes {shapes}, which do not line up axis by axis from the last one: "
                 "the arrays do not hold the same dimensions in the same order; check which axis each holds", where=where,
                 shapes=shown)
    return None


@dataclass(frozen=True)
class Case:
    """One seeded set of inputs. dims holds every size by name; extra holds other settings."""

    id: int
    dims: dict
    extra: dict = field(default_factory=dict)

    def __getattr__(self, name):
        try:
            return self.dims[name] if name in self.dims else self.extra[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def label(self) -> str:
        parts = [f"{k}={t(v) if isinstance(v, str) else v}" for k, v in {**self.dims, **self.extra}.items()]
        return t("case {id} ({settings})", id=self.id, settings=", ".join(parts))

    def generator(self, salt: int = 0) -> torch.Generator:
        return torch.Generator().manual_seed(1000 * self.id + salt)


def case(id: int, **dims) -> Case:
    """case(2, B=3, H=2, mask="padding"): ints are dimensions, everything else is a setting.

    An int setting (top_k=6, seed=11) lands in dims too: read every value as c.NAME, and build
    shapes from named sizes, never from c.dims.values().
    """
    sizes = {k: v for k, v in dims.items() if isinstance(v, int) and not isinstance(v, bool)}
    return Case(id, sizes, {k: v for k, v in dims.items() if k not in sizes})


@dataclass(frozen=True)
class Options:
    """Every option a check module may set, with its default. The engine and the kit read them here."""

    TARGET: str = ""  # the name the user's file defines (class or function) that the standard checks call
    CASES: tuple = ()  # numbered Case objects; every dimension of a case has its own size
    OUTPUTS: list | None = None  # [(name, shape legend), ...] of what TARGET returns; set: the standard checks run
    MISTAKES: tuple = ()  # named wrong versions used to say which mistake a wrong result equals
    TOLERANCES: dict = field(default_factory=dict)  # {"float64": (rtol, atol), ...} when the defaults do not fit
    DROPOUT: bool | str = False  # modules taking `dropout`: train-vs-eval checks; "weights": also where it acts
    BATCH_INDEPENDENT: bool = False  # changing batch item 0 leaves the others unchanged (cases need B)
    GRADIENTS: bool = True  # torch track: the gradient check (False for integer outputs)
    DEVICE: bool | str = False  # torch track: run on the meta device, so tensors made inside must follow the inputs.
    #   "followup": the statement sets no device rule, so a miss passes with the interviewer's question (--strict fails)
    FLOAT32: bool = True  # the float32 check (False for inputs that are not floats)
    TIMING: Case | None = None  # a larger case to time the user's code and the reference on (default: the last)
    LOAD_STATE: bool = True  # False: do not load the reference's state_dict (the kata computes its buffers)
    SHOW_WEIGHTS: tuple | None = None  # (case index, output index) of the attention map the report draws
    CONVENTIONS: tuple = ()  # accepted variants of the whole computation (Convention), tried in order
    PARTS: tuple = ()  # the given sub-modules of a composite kata (self_attn, norm1, ...): their calls are
    #   recorded to find the first one whose input differs, and none may be called more often than in the reference
    LOOPED_PARTS: tuple = ()  # parts a right answer may call once per head (a loop): compared only when called as
    #   often as in the reference, and never counted


OPTION_NAMES = frozenset(f.name for f in fields(Options))


def options(spec) -> Options:
    """The options a check module sets, the others at their defaults."""
    return Options(**{name: getattr(spec, name) for name in OPTION_NAMES if hasattr(spec, name)})


def unknown_options(spec) -> list[str]:
    """Public UPPERCASE names a check module assigns at top level that are not options (misspellings).

    Read from the source, so imported names (F, DTYPES) are not counted.
    """
    tree = ast.parse(Path(spec.__file__).read_text(encoding="utf-8"))
    assigned = []
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        for target in targets:
            for name in ast.walk(target):
                if isinstance(name, ast.Name) and name.id.isupper() and not name.id.startswith("_"):
                    assigned.append(name.id)
    return [name for name in assigned if name not in OPTION_NAMES]


def check(stage: str, title: str, *, followup: bool = False, **values):
    """Mark a function fn(kit) as a hidden check of a stage; it passes unless it raises Fail.

    title is English, with named placeholders filled from values (a callable value is called when the
    title is shown, so it can speak too); title_of() gives it in the language spoken. followup=True: the check holds an edge beyond the textbook answer; its Fail (or an error
    the user's code raises in it) becomes a follow-up question, not a failure, unless --strict.
    """
    assert stage in STAGES, stage

    def mark(fn):
        fn.stage, fn.followup, fn.english, fn.values = stage, followup, title, values
        return fn

    return mark


def title_of(fn) -> str:
    """A check's title in the language spoken: 'numerics: matches the reference in float64'."""
    lang = spoken()
    stage = say(lang, f"stage.{fn.stage}")
    return f"{stage}{'：' if lang == 'zh' else ': '}{t(fn.english, **_filled(fn.values))}"


def id_of(fn) -> str:
    """A check's identity, the same in every language: its English title."""
    with speaking("en"):
        return f"{fn.stage}: {t(fn.english, **_filled(fn.values))}"


def _filled(values: dict) -> dict:
    return {k: v() if callable(v) else v for k, v in values.items()}


# ----------------------------------------------------------------------------- comparing

def describe(value) -> str:
    if isinstance(value, torch.Tensor):
        return t("a tensor of shape {shape}", shape=tuple(value.shape))
    if isinstance(value, np.ndarray):
        return t("a NumPy array of shape {shape}", shape=value.shape)
    if isinstance(value, Opaque):
        return f"a {value.type} ({value.repr})"
    if isinstance(value, (tuple, list)):
        return t("a {kind} of {count} items", kind=type(value).__name__, count=len(value))
    return "None" if value is None else t("a {kind} ({value})", kind=type(value).__name__, value=repr(value))


def _dtype_diagnosis(actual, expected) -> str | None:
    """Where a float64-for-float32 (or float32-for-float64) result comes from, by track."""
    want, got = (_dtype_name(x).rsplit(".", 1)[-1] for x in (expected, actual))
    torch_track = isinstance(expected, torch.Tensor)
    if (want, got) == ("float32", "float64"):
        return (t("something made inside is float64 (dtype=torch.float64, .double(), torch.from_numpy) and promotes "
                  "the result: create what you make in the inputs' dtype (dtype=x.dtype)") if torch_track else
                t("something made inside is float64 (np.zeros or np.ones without dtype=, a np.float64 scalar) and "
                  "promotes the result: create what you make in the inputs' dtype (dtype=x.dtype)"))
    if (want, got) == ("float64", "float32"):
        return (t("the result is built in or cast to float32 (torch.zeros(...) without dtype= filled in place, "
                  ".float()): create it in the inputs' dtype (torch.zeros_like(x), x.new_zeros(...))") if torch_track
                else t("the result is cast to or built in float32 (astype(np.float32), dtype=np.float32): keep the "
                       "inputs' dtype"))
    return None


def compare(actual, expected, what: str, legend: str = "", *, exact: bool = False, tol=None) -> None:
    """The one comparison: kind, exact shape (never broadcast), dtype, then values. Raises Fail.

    Values pass when |actual - expected| <= atol + rtol * |expected| everywhere (NaN equals NaN).

    tol=(rtol, atol) overrides the dtype's default tolerance (a kata names its own and says why).
    """
    want_kind = torch.Tensor if isinstance(expected, torch.Tensor) else np.ndarray
    if not isinstance(actual, want_kind):
        kind = "a torch.Tensor" if want_kind is torch.Tensor else "a NumPy array (np.ndarray)"
        raise Fail(t("{what} should be {kind}, got {got}", what=what, kind=kind, got=describe(actual)))
    if tuple(actual.shape) != tuple(expected.shape):
        shown = f"{legend} = {tuple(expected.shape)}" if legend else f"{tuple(expected.shape)}"
        raise Fail(t("{what} should have shape {shown}, got {got}", what=what, shown=shown, got=tuple(actual.shape)))
    if actual.dtype != expected.dtype:
        raise Fail(t("{what} should have dtype {want}, got {got}", what=what, want=_dtype_name(expected),
                     got=_dtype_name(actual)))
    a, e = _as_tensor(actual), _as_tensor(expected)
    if a.numel() == 0:
        return
    if exact or not a.is_floating_point():
        bad = a != e
        if bad.any():
            raise Fail(t("{what}: {count} of {total} elements differ; first at index {index}: got {got}, expected "
                         "{want}", what=what, count=int(bad.sum()), total=a.numel(), index=_index(bad),
                         got=_fmt(a[bad][0]), want=_fmt(e[bad][0])))
        return
    rtol, atol = tol or ((RTOL_F32, ATOL_F32) if a.dtype == torch.float32 else (RTOL_F64, ATOL_F64))
    # The rule of torch.testing.assert_close, |a - e| <= atol + rtol * |e| with NaN equal to NaN,
    # applied with torch.isclose: assert_close's first call imports torch.distributed and sympy
    # (0.8-2 s), which every cold `kata check` would pay.
    bad = ~torch.isclose(a, e, rtol=rtol, atol=atol, equal_nan=True)
    if not bad.any():
        return
    nan = torch.isnan(a) & ~torch.isnan(e)
    if nan.any():
        raise Fail(t("{what}: {count} of {total} elements are NaN; first at index {index}", what=what,
                     count=int(nan.sum()), total=a.numel(), index=_index(nan)))
    diff = (a - e).abs().nan_to_num(nan=math.inf)
    worst = divmod_index(int(torch.argmax(torch.where(bad, diff, torch.zeros_like(diff)))), a.shape)
    raise Fail(t("{what}: {count} of {total} elements differ; largest difference {diff} at index {index}: got {got}, "
                 "expected {want}", what=what, count=int(bad.sum()), total=a.numel(), diff=_fmt(diff[worst]),
                 index=worst, got=_fmt(a[worst]), want=_fmt(e[worst])))


def matches(actual, expected, tol=None) -> bool:
    """True when compare() would accept actual."""
    try:
        compare(actual, expected, "value", tol=tol)
        return True
    except Fail:
        return False


def _as_tensor(x) -> torch.Tensor:
    return torch.from_numpy(np.asarray(x)) if isinstance(x, np.ndarray) else x


def _dtype_name(x) -> str:
    return str(x.dtype) if isinstance(x, torch.Tensor) else f"numpy.{x.dtype}"


def divmod_index(flat: int, shape) -> tuple:
    out = []
    for size in reversed(tuple(shape)):
        flat, rem = divmod(flat, size)
        out.append(rem)
    return tuple(reversed(out))


def _index(mask: torch.Tensor) -> tuple:
    return divmod_index(int(mask.reshape(-1).nonzero()[0]), mask.shape)


def _fmt(x) -> str:
    value = x.item() if hasattr(x, "item") else x
    return f"{value:.6g}" if isinstance(value, float) else str(value)


def as_outputs(value, outputs: list[tuple[str, str]]) -> tuple:
    """Split what TARGET returned into the named outputs, or say what is wrong with its form."""
    if len(outputs) == 1:
        return (value,)
    names = " and ".join(name for name, _ in outputs)
    if not isinstance(value, (tuple, list)) or len(value) != len(outputs):
        raise Fail(t("should return a tuple ({names}), got {got}", names=names, got=describe(value)))
    return tuple(value)


# ----------------------------------------------------------------------------- the user proxy


class Kit:
    """Handed to every check: calls the user's code (in the child) and the reference (here)."""

    def __init__(self, spec, sandbox, solution, *, makes_tensors: bool = True):
        """makes_tensors: rules.makes_tensors of the user's source; False skips the meta-device run."""
        self.spec, self.sandbox, self.solution = spec, sandbox, solution
        self.options = options(spec)
        self.convention: Convention | None = None  # the accepted variant the user's code follows, if any
        self.divergence_line: int | None = None  # the user's line that feeds the first diverging part
        self.user_seconds: float | None = None  # set by time(): fastest run of the user's code
        self.reference_seconds: float | None = None
        self.diagnosis: str | None = None
        self.general_diagnosis: str | None = None  # shown only when no check named the mistake
        self.makes_tensors = makes_tensors
        self._states: dict = {}  # (case, dtype) -> the reference's weights, built once

    # -- the module or function under test

    def init(self, case: Case):
        make = getattr(self.spec, "init", None)
        return make(case) if make else None

    def state(self, case: Case, dtype: str):
        """The reference's weights for this case (seeded), loaded into the user's module by name."""
        key = (case.id, dtype)
        if key not in self._states:
            self._states[key] = self._make_state(case, dtype)
        cached = self._states[key]  # a fresh copy each time: a check may edit the weights it gets
        return None if cached is None else {k: v.clone() for k, v in cached.items()}

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
        if case is not None:
            init = self.init(case) if init is None else init
            state = self.state(case, dtype) if state is None else state
        try:
            reply = self.sandbox.request(
                "call", target=target or self.spec.TARGET, init=init, state=state, dtype=dtype,
                args=tuple(args), kwargs=kwargs or {}, train=train, method=method, return_args=return_args,
                repeat=repeat, cotangents=cotangents)
        except UserError as err:
            err.case = err.case or case  # the sizes in a shape error are named after this case's dimensions
            raise
        value = (reply["value"], reply["args_after"]) if return_args else reply["value"]
        return value, reply["seconds"]

    def drive(self, driver, *args):
        """Run driver(user_module, *args) in the child; return its (decoded) value.

        driver is a function of the child-side package checker.checks.child: the child imports it
        by name, so it never travels as code.
        """
        module, name = driver.__module__, driver.__qualname__
        if not module.startswith(CHILD_PACKAGE + "."):
            raise ValueError(f"a driver lives in {CHILD_PACKAGE}, not in {module}")
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
        """What the sandbox's boundary recorded so far (checker.boundary): ("trapped", line, name) for an
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
        if method:
            fn = getattr(fn, method)
        with torch.no_grad():
            return fn(*_clone(args), **(kwargs or {}))

    def _reference_callable(self, *, case=None, dtype="float64", target=None, init=None, state=None, impl=None):
        if case is not None:
            init = self.init(case) if init is None else init
            state = self.state(case, dtype) if state is None else state
        followed = self.convention.impl if self.convention is not None and target in (None, self.spec.TARGET) else None
        obj = impl or followed or getattr(self.solution, target or self.spec.TARGET)
        if init is not None and isinstance(obj, type):
            module = obj(**init).to(DTYPES[dtype])
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
        leaves = [a.detach().clone().requires_grad_(True) if _float(a) else a for a in args]
        value = fn(*leaves)
        outs = [o for o in (value if isinstance(value, (tuple, list)) else (value,)) if _float(o)]
        sum((o * c).sum() for o, c in zip(outs, cotangents)).backward()
        params = dict(fn.named_parameters()) if isinstance(fn, torch.nn.Module) else {}
        return {"args": [a.grad if _float(a) else None for a in leaves], "params": {n: p.grad for n, p in params.items()}}

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
        reference for every later comparison; None when it follows none (or the reference itself)."""
        opts = self.options
        if not opts.CONVENTIONS or opts.OUTPUTS is None:
            return None
        try:
            got = [as_outputs(self.user(self.inputs(c), case=c), opts.OUTPUTS) for c in opts.CASES]
        except (Fail, UserError):
            return None  # the checks say what is wrong with it
        for convention in opts.CONVENTIONS:
            try:
                wrong = [as_outputs(self.reference(self.inputs(c), case=c, impl=convention.impl), opts.OUTPUTS)
                         for c in opts.CASES]
            except Exception:  # noqa: BLE001 - a convention that cannot run on these cases does not apply
                continue
            if all(matches(u, w, convention.tol) for g, e in zip(got, wrong) for u, w in zip(g, e)):
                self.convention = convention
                return convention
        return None

    def diagnose(self, case: Case, dtype: str, user_outputs: tuple) -> str | None:
        """Name the known mistake whose result on this case equals the user's outputs, if any; else, for a
        composite kata, the first given sub-part whose input differs from the reference's."""
        found = self.name_mistake(self.inputs(case, dtype), tuple(user_outputs), tol=self.tolerance(dtype),
                                  outputs=self.spec.OUTPUTS, case=case, dtype=dtype)
        if found or not self.options.PARTS or dtype != "float64":
            return found
        try:
            found = self.first_divergence(case)
        except (Fail, UserError):
            return None  # the user's module cannot be recorded: the other checks say why
        self.diagnosis = self.diagnosis or found
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
        named = dict(zip(_arg_names(self, target), args))
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
                        what = _identify(actual, candidates) or _identify(actual, theirs) or t(
                            "a tensor that is none of the layer's inputs and outputs")
                        expected = _identify(expected, candidates) or t("what the reference gives it")
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
                     **how) -> str | None:
        """The explanation of the first mistake (default: the kata's MISTAKES) whose result on args equals
        got, one value or a tuple of them; it becomes the report's diagnosis.

        run(mistake) computes a mistake's result when calling the reference with impl=mistake.impl
        (and `how`: case=, dtype=, target=, method=) is not how this kata runs one; same(got, wrong)
        replaces "every value matches within tol"; outputs splits a result as as_outputs() does.
        """
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
                several = isinstance(got, (tuple, list)) and isinstance(wrong, (tuple, list)) and len(got) == len(wrong)
                found = all(matches(u, w, tol) for u, w in (zip(got, wrong) if several else [(got, wrong)]))
            if found:
                explain = t(mistake.explain)
                self.diagnosis = self.diagnosis or explain
                return explain
        return None


@dataclass(frozen=True)
class Mistake:
    """A realistic wrong version: impl behaves like the mistaken code, explain says what to fix."""

    name: str
    impl: object
    explain: str


MEMORY_NAMES = ("memory", "encoder_output", "enc_output")  # a layer input that is the encoder's output


def _identify(value, candidates: list) -> str | None:
    """Which candidate (a description, a tensor) value equals, or which sum of two of them."""
    if not isinstance(value, (torch.Tensor, np.ndarray)):
        return None
    same_shape = [(d, c) for d, c in candidates if type(c) is type(value) and c.shape == value.shape
                  and _floats(c) == _floats(value)]
    for description, candidate in same_shape:
        if matches(value, candidate):
            return description
    if not _floats(value):
        return None  # a mask: equal to one of the inputs, or to nothing nameable
    for i, (a, x) in enumerate(same_shape):
        for b, y in same_shape[i + 1:]:
            if matches(value, x + y):
                return f"{a} + {b}"
    for a, x in same_shape:  # a sign slip: x - y
        for b, y in same_shape:
            if a != b and matches(value, x - y):
                return f"{a} − {b}"
    return None


def _float(x) -> bool:
    return isinstance(x, torch.Tensor) and x.is_floating_point()


def _floats(x) -> bool:
    """A float tensor or a float NumPy array."""
    return _float(x) or (isinstance(x, np.ndarray) and x.dtype.kind == "f")


def _clone(args: tuple) -> tuple:
    """Copies, so that a call cannot change what the next one gets (a generator's state included)."""
    return tuple(a.clone() if isinstance(a, torch.Tensor) else a.copy() if isinstance(a, np.ndarray)
                 else _copy_generator(a) if isinstance(a, torch.Generator) else a for a in args)


def _copy_generator(g: torch.Generator) -> torch.Generator:
    copy = torch.Generator(device=g.device)
    copy.set_state(g.get_state())
    return copy


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
                       t("the weights are registered under other names than the contract's, so the reference's "
                         "weights cannot be loaded into them: name the submodules as the docstring does"), general=True)
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
                found = None if stage_shapes_only else kit.diagnose(c, dtype, got)
                if found is None and _floats(u) and _floats(e) and u.shape == e.shape and u.dtype != e.dtype:
                    raise Fail(message, _dtype_diagnosis(u, e), general=True) from None
                raise Fail(message, found, line=kit.divergence_line if found else None) from None

    def legends():
        return t(" and ").join(f"{n} {legend}".strip() for n, legend in outputs)

    @check("shapes", "returns {legends} on every case", legends=legends)
    def shapes(kit):
        run_all(kit, "float64", True)

    @check("numerics", "matches the reference in float64")
    def numerics64(kit):
        try:
            run_all(kit, "float64", False)
        except Fail:
            if kit.convention is None and kit.settle() is not None:
                run_all(kit, "float64", False)  # against the convention now, on every case
                raise Accepted(t(kit.convention.explain)) from None
            # Code that follows no convention: report a case where it is wrong beyond each convention's
            # tolerance (float32 internals), not the first case, which may differ by float32 rounding only.
            if kit.convention is None:
                for tol in [c.tol for c in kit.options.CONVENTIONS if c.tol is not None]:
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
            cotangents = [torch.randn(e.shape, generator=g, dtype=e.dtype) for e in expected_out if _float(e)]
            if not cotangents:
                raise Fail(t("the reference returns no float tensor to differentiate: set GRADIENTS = False"))
            want = kit.gradients(c, cotangents, user=False)
            got = kit.gradients(c, cotangents, user=True)
            names = [n for n, _ in zip(_arg_names(kit), want["args"])]
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
            if err.not_implemented and "meta" not in err.message.lower():  # not the meta device's own (.tolist())
                raise
            if not any(word in err.message for word in DEVICE_MISMATCH):
                return  # an operation the meta device lacks (data-dependent code): no verdict either way
            message = t("{label}, inputs on another device (meta): {error}", label=c.label,
                        error=err.message.splitlines()[0]) + at_line(err)
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

    checks = [shapes, numerics64, hygiene] + ([numerics32] if opts.FLOAT32 else [])
    takes_tensors = any(isinstance(a, torch.Tensor) for c in spec.CASES for a in spec.inputs(c, "float64"))
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
        c = spec.CASES[0]
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


def _arg_names(kit: Kit, name: str | None = None) -> list[str]:
    import inspect

    target = getattr(kit.solution, name or kit.spec.TARGET)
    fn = target.forward if isinstance(target, type) else target
    return [p for p in inspect.signature(fn).parameters if p != "self"]


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

    return [dropout_eval, dropout_train] + ([dropout_on_weights] if spec.DROPOUT == "weights" else [])


_ZH = register({
    "{label}: your code raised {err}{where}": "{label}：你的代码抛出了 {err}{where}",
    # check titles
    "returns {legends} on every case": "每组输入都返回 {legends}",
    " and ": " 和 ",
    "matches the reference in float64": "float64 下与参考答案一致",
    "float32 in gives float32 out, close to the reference": "输入 float32 得到 float32 输出，并与参考答案接近",
    "leaves the caller's inputs unchanged": "不修改调用者传入的输入",
    "backward gives the reference's gradients for the inputs and every weight":
        "反向传播得到的输入梯度和每个权重的梯度都与参考答案一致",
    "tensors made inside follow the inputs' device (run on the meta device)":
        "内部新建的张量跟随输入所在的设备（在 meta 设备上运行）",
    "batch items are independent: changing item 0 leaves the others unchanged":
        "批次中的样本互不影响：改动第 0 个样本，其他样本的结果不变",
    "any leading axes work: (T, D) and (B, N, T, D) inputs as well as (B, T, D)":
        "任意前导维度都能用：除了 (B, T, D)，(T, D) 和 (B, N, T, D) 的输入也可以",
    "dropout is off in eval mode: dropout=0.5 in eval gives the dropout=0.0 result":
        "eval 模式下 dropout 不起作用：eval 模式下 dropout=0.5 的结果等于 dropout=0.0 的结果",
    "dropout acts in training mode: dropout=0.5 in train mode changes the result":
        "训练模式下 dropout 起作用：train 模式下 dropout=0.5 会改变结果",
    "dropout acts on the attention weights, not on the output": "dropout 作用在注意力权重上，而不是输出上",
    "{label}: float32 inputs gave a float64 {name}, right in value. Follow-up: where does the float64 come from, and "
    "why does it matter? Under NumPy 2 a NumPy float64 scalar such as np.sqrt(d_k) or np.float64(eps) turns a float32 "
    "array into float64, which doubles the memory and slows every later step: divide by math.sqrt(d_k), a Python "
    "float, to keep the input's dtype": "{label}：float32 的输入得到了 float64 的 {name}，数值是对的。追问：float64 "
                                        "从哪里来，为什么要紧？在 NumPy 2 下，像 np.sqrt(d_k) 或 np.float64(eps) 这样的 "
                                        "NumPy float64 标量会把 float32 数组变成 float64，内存翻倍，后面每一步都变慢："
                                        "除以 math.sqrt(d_k)（Python 的 float），就能保持输入的 dtype",
    "each given part (attention, norm, FFN, ...) is called no more often than in the reference":
        "每个给定的部件（注意力、归一化、前馈网络……）被调用的次数不多于参考答案",
    "{label}: {part} is called {actual} time(s) in one forward pass; the reference calls it {expected} time(s): each "
    "sublayer runs once where the paper's figure has it (a second call costs time and, with dropout, draws a second "
    "mask)": "{label}：一次前向传播中 {part} 被调用了 {actual} 次；参考答案调用 {expected} 次：每个子层只在论文图中它所在的"
             "位置运行一次（多调用一次既费时间，有 dropout 时还会再抽一次掩码）",
    "the layer's input {name}": "层的输入 {name}",
    "dropout in the wrong place: it hits x, a residual sum or a normalized output, not only the sublayer outputs":
        "dropout 位置不对：它作用在了 x、残差的和或归一化后的输出上，而不只是子层的输出上",
    "dropout in the wrong place: on the attention output, not on the weights": "dropout 位置不对：用在了注意力的输出上，而不是权重上",
    "dropout in the wrong place: on the scores before the softmax, not on the weights after it":
        "dropout 位置不对：用在了 softmax 之前的打分上，而不是 softmax 之后的权重上",
    "the model's dropout does not reach every part: {name} is built with p={got}":
        "模型的 dropout 没有传到每个部件：{name} 构建时 p={got}",
    "dropout in the wrong place: a sublayer output is not dropped out in training":
        "dropout 位置不对：训练时有一个子层的输出没有经过 dropout",
    "{part} is called more often than in the reference: the extra call is on line {line}":
        "{part} 被调用的次数比参考答案多：多出来的调用在第 {line} 行",
    "{part} is called more often than in the reference": "{part} 被调用的次数比参考答案多",
    "the encoder memory {name}": "编码器的输出 memory（{name}）",
    "{part} call {number}": "第 {number} 次调用的 {part}",
    "first divergence: {part} receives {got} tensor arguments; the reference passes {want} (a mask left out, or "
    "passed where the reference passes none?)": "第一处分歧：{part} 收到 {got} 个张量参数；参考答案传的是 {want} 个"
                                                "（漏传了掩码，或者在参考答案不传掩码的地方传了？）",
    "{part} is never called where the reference calls it (call {number})": "参考答案调用 {part} 的地方（第 {number} 次调用）你的代码没有调用它",
    "a tensor that is none of the layer's inputs and outputs": "一个既不是层的输入、也不是任何部件输出的张量",
    "first divergence: {part} (argument {number}) receives {what}; expected {expected}":
        "第一处分歧：{part}（第 {number} 个参数）收到的是 {what}；应为 {expected}",
    "what the reference gives it": "参考答案传给它的值",
    "first divergence: {part} (its argument {param}) receives {what}; expected {expected}":
        "第一处分歧：{part}（参数 {param}）收到的是 {what}；应为 {expected}",
    "{part}'s output": "{part} 的输出",
    "{part}'s input": "{part} 的输入",
    "your {part}'s output": "你的代码里 {part} 的输出",
    "{part} is called {actual} time(s); the reference calls it {expected} time(s): the extra call changes the result":
        "{part} 被调用了 {actual} 次；参考答案调用 {expected} 次：多出来的调用改变了结果",
    # the words of every verdict
    "{message}. Diagnosis: {diagnosis}": "{message}。诊断：{diagnosis}",
    " (line {line})": "（第 {line} 行）",
    "case {id} ({settings})": "第 {id} 组输入（{settings}）",
    "{label}: {fail}": "{label}：{fail}",
    "a tensor of shape {shape}": "形状为 {shape} 的张量",
    "a NumPy array of shape {shape}": "形状为 {shape} 的 NumPy 数组",
    "a {kind} of {count} items": "包含 {count} 项的 {kind}",
    "a {kind} ({value})": "一个 {kind}（{value}）",
    "nothing": "什么都没有",
    "none": "没有",
    "{what} should be {kind}, got {got}": "{what} 应该是 {kind}，实际得到 {got}",
    "{what} should have shape {shown}, got {got}": "{what} 的形状应为 {shown}，实际是 {got}",
    "{what} should have dtype {want}, got {got}": "{what} 的 dtype 应为 {want}，实际是 {got}",
    "{what}: {count} of {total} elements differ; first at index {index}: got {got}, expected {want}":
        "{what}：{total} 个元素中有 {count} 个不同；第一个在下标 {index}：得到 {got}，应为 {want}",
    "{what}: {count} of {total} elements are NaN; first at index {index}":
        "{what}：{total} 个元素中有 {count} 个是 NaN；第一个在下标 {index}",
    "{what}: {count} of {total} elements differ; largest difference {diff} at index {index}: got {got}, expected {want}":
        "{what}：{total} 个元素中有 {count} 个不同；最大差值 {diff} 在下标 {index}：得到 {got}，应为 {want}",
    "should return a tuple ({names}), got {got}": "应该返回一个元组（{names}），实际得到 {got}",
    " Found '{name}': did you misname it?": " 找到了 '{name}'：是不是名字写错了？",
    " The file defines: {names}.": " 文件里定义的是：{names}。",
    "'{target}' is missing.{hint}": "缺少 '{target}'。{hint}",
    "'{target}' should be a class deriving from torch.nn.Module": "'{target}' 应该是继承 torch.nn.Module 的类",
    "'{target}' should be a function": "'{target}' 应该是一个函数",
    "{where} should take ({want}), but takes ({got})": "{where} 的参数应为 ({want})，实际是 ({got})",
    "{target}({init}) has no parameter {shapes}; it has {names}. The docstring names the submodules the checker loads "
    "weights into": "{target}({init}) 没有参数 {shapes}；它有的是 {names}。文档字符串写明了检查器往哪些子模块里加载权重",
    "parameter {name} should have shape {want}, got {got}": "参数 {name} 的形状应为 {want}，实际是 {got}",
    "{target}({init}) has parameters the contract does not have: {names}": "{target}({init}) 有约定之外的参数：{names}",
    "argument {number}": "第 {number} 个参数",
    "an in-place operation (x -= m, x[...] = ...) writes into the caller's array: compute a new one instead, "
    "x = x - m": "原地操作（x -= m、x[...] = ...）写进了调用者的数组：请算出一个新数组，写 x = x - m",
    "an in-place operation (x += ..., masked_fill_, x[...] = ...) writes into the caller's tensor: compute a new one "
    "instead (x = x + ..., masked_fill)": "原地操作（x += ...、masked_fill_、x[...] = ...）写进了调用者的张量：请算出一个新"
                                          "张量（x = x + ...、masked_fill）",
    "{label}: your code modified its input ({fail})": "{label}：你的代码修改了它的输入（{fail}）",
    "the reference returns no float tensor to differentiate: set GRADIENTS = False":
        "参考答案没有返回可求导的浮点张量：请设置 GRADIENTS = False",
    "no gradient reaches {name}: something detaches it from the graph": "梯度传不到 {name}：有操作把它从计算图上断开了",
    "gradient of {name}": "{name} 的梯度",
    "no gradient reaches the weight {name}: is it used, and not detached?":
        "梯度传不到权重 {name}：它被用到了吗？有没有被 detach？",
    "{label}, inputs on another device (meta): {error}": "{label}，输入放在另一个设备（meta）上：{error}",
    "a tensor made inside (a mask, positions, a constant) is created on the CPU whatever the inputs' device: pass "
    "device=x.device (e.g. torch.ones(T, T, dtype=torch.bool, device=x.device)) or use x.new_ones(...)":
        "内部新建的张量（掩码、位置、常量）不管输入在哪个设备上都建在了 CPU 上：请传 device=x.device（例如 "
        "torch.ones(T, T, dtype=torch.bool, device=x.device)），或者用 x.new_ones(...)",
    "{label}: with every input on the meta device, your result came back on {device}":
        "{label}：所有输入都在 meta 设备上，你的结果却在 {device} 上",
    "the result is built on a fixed device, not the inputs' one: create it with device=x.device or from the inputs "
    "(x.new_zeros(...), torch.zeros_like(x))": "结果建在了固定的设备上，而不是输入所在的设备：请用 device=x.device 创建，"
                                               "或者从输入派生（x.new_zeros(...)、torch.zeros_like(x)）",
    "line {line}": "第 {line} 行",
    "{where} joins tensors along axis {axis} whose other axes differ (size {a} against {b}): they do not hold the same "
    "dimensions in the same order; check the axis you concatenate along and which axis each holds":
        "{where}沿第 {axis} 维拼接的张量在其他维度上长度不同（{a} 对 {b}）：它们存放的维度不同或顺序不同；检查拼接所沿的维度，"
        "以及每个张量的各个轴分别是什么",
    "view() needs the tensor's memory in order, and a transpose or permute before it leaves it out of order: call "
    ".contiguous() before .view(...), or use .reshape(...)": "view() 要求张量在内存里按顺序存放，而它前面的 transpose 或 "
                                                              "permute 打乱了顺序：在 .view(...) 之前调用 .contiguous()，"
                                                              "或者改用 .reshape(...)",
    "the transpose lists another number of axes than the array has there: the array's rank is not what the code "
    "assumes; swap only the axes you mean (np.swapaxes(x, -1, -2))": "transpose 列出的轴数和数组在这里实际的维数不同："
                                                                     "数组的维数和代码假设的不一样；只交换你要交换的轴"
                                                                     "（np.swapaxes(x, -1, -2)）",
    "your code": "你的代码",
    "{where} meets an axis of size {a} with one of size {b}: the two tensors do not hold the same dimensions there; "
    "check which axis each holds": "{where}把长度为 {a} 的维度和长度为 {b} 的维度对在了一起：两个张量在这里存放的不是同一组"
                                   "维度；检查每个张量的各个轴分别是什么",
    "{where} multiplies a matrix of {a} columns by one of {b} rows: the inner sizes must agree; check which axis each "
    "holds (a missing transpose, or the wrong weight)": "{where}把 {a} 列的矩阵乘以 {b} 行的矩阵：相乘的内侧维度必须一致；"
                                                       "检查每个轴分别是什么（少了一次转置，还是用错了权重）",
    "{where} asks for the shape ({shape}) from a tensor of {total} elements, which that shape cannot hold: build the "
    "new shape from the sizes the tensor has there, and check which axis holds what":
        "{where}要把 {total} 个元素的张量变成形状 ({shape})，这个形状装不下它：用张量在这里实际的各维长度构造新形状，"
        "并检查每个轴分别是什么",
    "{where} combines arrays of shapes {shapes}, which do not line up axis by axis from the last one: the arrays do not "
    "hold the same dimensions in the same order; check which axis each holds": "{where}把形状为 {shapes} 的数组放在一起运算，"
                                                                               "从最后一维起逐轴对不上："
                                                                 "两个数组的维度不同或顺序不同；检查每个轴分别是什么",
    "something made inside is float64 (dtype=torch.float64, .double(), torch.from_numpy) and promotes the result: "
    "create what you make in the inputs' dtype (dtype=x.dtype)": "内部新建的东西是 float64（dtype=torch.float64、.double()、"
                                                                 "torch.from_numpy），把结果提升成了 float64：新建的张量请用"
                                                                 "输入的 dtype（dtype=x.dtype）",
    "something made inside is float64 (np.zeros or np.ones without dtype=, a np.float64 scalar) and promotes the "
    "result: create what you make in the inputs' dtype (dtype=x.dtype)": "内部新建的东西是 float64（没写 dtype= 的 "
                                                                         "np.zeros 或 np.ones、np.float64 标量），把结果"
                                                                         "提升成了 float64：新建的数组请用输入的 dtype"
                                                                         "（dtype=x.dtype）",
    "the result is built in or cast to float32 (torch.zeros(...) without dtype= filled in place, .float()): create it "
    "in the inputs' dtype (torch.zeros_like(x), x.new_zeros(...))": "结果是用 float32 建的或被转成了 float32（没写 dtype= "
                                                                    "的 torch.zeros(...) 再原地填值、.float()）：请用输入的 "
                                                                    "dtype 创建（torch.zeros_like(x)、x.new_zeros(...)）",
    "the result is cast to or built in float32 (astype(np.float32), dtype=np.float32): keep the inputs' dtype":
        "结果被转成了 float32 或用 float32 建（astype(np.float32)、dtype=np.float32）：请保持输入的 dtype",
    "the checker looks your code up by the exact name '{target}', which the file does not define":
        "检查程序按确切的名字 '{target}' 查找你的代码，而文件里没有定义这个名字",
    "the checker builds it with its constructor's arguments and loads weights into it, which only a torch.nn.Module "
    "subclass allows": "检查程序用构造参数创建它并加载权重，只有 torch.nn.Module 的子类才能这样做",
    "the checker calls it directly with the inputs, as a plain function, not as a class to build":
        "检查程序把输入直接传给它调用，它应是普通函数，而不是要先实例化的类",
    "the checker passes the documented arguments (by position, a constructor's by name), so parameters missing, "
    "renamed or reordered receive the wrong values": "检查程序按文档传参（按位置传，构造函数按名字传），参数缺少、改名或顺序"
                                                     "不对都会收到错误的值",
    "the weights are registered under other names than the contract's, so the reference's weights cannot be loaded "
    "into them: name the submodules as the docstring does": "权重注册的名字和约定的不同，参考答案的权重加载不进去：请按文档"
                                                            "字符串给子模块命名",
    "a weight is built with other sizes than the contract's: check the sizes passed to its layer (nn.Linear(in, out) "
    "stores its weight as (out, in))": "有个权重的尺寸和约定的不同：检查传给这一层的尺寸（nn.Linear(in, out) 的权重形状是 "
                                       "(out, in)）",
    "the module holds weights the contract does not have, which the reference's weights cannot fill: drop them or "
    "build them from the contract's submodules": "模块里有约定之外的权重，参考答案的权重填不满它们：删掉它们，或者用约定"
                                                 "里的子模块来构建",
    "{label}: changing batch item 0 changed the {name} of other items ({fail}); something mixes the batch axis "
    "(a reshape or transpose across B?)": "{label}：改动第 0 个样本改变了其他样本的 {name}（{fail}）；有操作把批次维混在了一起"
                                          "（跨 B 的 reshape 或 transpose？）",
    "{label}: your code works on a (B, T, D) input but raised {error}{where} on a rank-{rank} input":
        "{label}：你的代码在 (B, T, D) 输入上能运行，但在 {rank} 维输入上抛出了 {error}{where}",
    "the code assumes exactly three axes (B, T, D = x.shape, or a reshape to (B * T, D)), but the network acts on the "
    "last axis only and nn.Linear accepts any leading axes: leave the leading axes as they come":
        "代码假定输入正好有三个维度（B, T, D = x.shape，或 reshape 成 (B * T, D)），但前馈网络只作用于最后一维，nn.Linear "
        "接受任意前导维度：前导维度保持原样即可",
    "{label}, eval mode, dropout=0.5 vs dropout=0.0: {fail}": "{label}，eval 模式下 dropout=0.5 与 dropout=0.0 对比：{fail}",
    "the dropout rate still changes the result after .eval(): a dropout that ignores the mode (F.dropout(x, p) "
    "without self.training, or a mask of your own) keeps dropping; use nn.Dropout, or F.dropout(x, p, self.training)":
        "调用 .eval() 之后 dropout 比例仍然改变结果：不看模式的 dropout（没传 self.training 的 F.dropout(x, p)，或自己做的"
        "掩码）会一直丢弃；请用 nn.Dropout，或 F.dropout(x, p, self.training)",
    "{label}: with dropout=0.5 in training mode the result equals the result without dropout":
        "{label}：训练模式下 dropout=0.5 的结果和没有 dropout 时一样",
    "the dropout rate has no effect in training mode: nothing the result depends on goes through self.dropout; apply "
    "it where the contract says": "训练模式下 dropout 比例不起作用：结果依赖的东西都没有经过 self.dropout；请在约定的位置"
                                  "使用它",
    "{label}: with dropout=0.5 in training mode {share:.0%} of the output elements are exactly 0: dropout is applied "
    "to the output; the contract applies it to the attention weights, before they multiply V "
    "(self.dropout(weights) @ V)": "{label}：训练模式下 dropout=0.5 时，输出中有 {share:.0%} 的元素恰好为 0：dropout 用在了"
                                   "输出上；约定是用在注意力权重上，在它们乘以 V 之前（self.dropout(weights) @ V）",
})
