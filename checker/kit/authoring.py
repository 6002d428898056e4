"""The vocabulary a check module is written in: cases, options, @check, Fail, FollowUp, Accepted, Convention."""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, fields
from pathlib import Path

import torch

from checker.lang import joined, said, say, speaking, spoken, t
from checker.results import STAGES

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

    def sentence(self):
        """The message with its diagnosis, as a message (or the plain text a check gave)."""
        return t("{message}. Diagnosis: {diagnosis}", message=self.message, diagnosis=self.diagnosis) \
            if self.diagnosis else self.message

    def __str__(self) -> str:
        return str(self.sentence())

    def said(self, lang: str) -> str:
        """As str(), in lang: a Fail given as a value of a message is drawn again with it."""
        return said(self.sentence(), lang)


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
    it on some case (tests/checks/test_catalogue.py holds each kata to that), so accepting it opens no door.
    """

    name: str
    explain: str
    impl: object = None
    tol: tuple | None = None


# float32 arithmetic inside, float64 in and out: sums of a few dozen terms and an exp() in float32.
FLOAT32_INSIDE = (1e-5, 1e-6)

# The one policy for float32 internals on float64 input, in every kata: accepted as a variant, held to
# FLOAT32_INSIDE (tests/checks/test_catalogue.py holds every kata's named mistakes outside it). Tried after a
# kata's own conventions, which name a source (LLaMA's float32 softmax).
FLOAT32_INTERNALS = Convention(
    "float32 internals", "float32 arithmetic inside was recognised: on float64 input your result carries float32 "
    "rounding (about 1e-7) and is held to 1e-5, as every kata holds it. This kata's reference keeps the input's dtype "
    "throughout; models upcast to float32 (a softmax, a norm's statistics) because they run in float16 or bfloat16, "
    "where those lose digits", tol=FLOAT32_INSIDE)


# The settings a case names with a word, not with the name of a size (B, d_k) or of an argument of the user's code
# (eps, top_k): a Chinese report says them in Chinese, as checker/zh.toml has them ("rows=" = "各行=").
WORDED_SETTINGS = frozenset({"rows", "kind", "order", "hidden", "masks", "pad", "padding", "side", "empty", "schedule",
                             "scores", "seed", "noise", "hyper", "state", "steps", "curvature", "corpus", "lead",
                             "bias", "bos", "eos", "lp", "beam"})


@dataclass(frozen=True)
class Case:
    """One seeded set of inputs. dims holds every size by name; extra holds other settings."""

    id: int
    dims: dict
    extra: dict = field(default_factory=dict)

    def __getattr__(self, name):
        if name.startswith("__") or name in ("dims", "extra"):  # being unpickled: no fields yet, no recursion
            raise AttributeError(name)
        try:
            return self.dims[name] if name in self.dims else self.extra[name]
        except KeyError:
            raise AttributeError(name) from None

    @property
    def label(self) -> str:
        parts = [(t(f"{k}=") if k in WORDED_SETTINGS else f"{k}=") + (t(v) if isinstance(v, str) else str(v))
                 for k, v in {**self.dims, **self.extra}.items()]
        return t("case {id} ({settings})", id=self.id, settings=joined(", ", parts))

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
    DRAWS: bool = False  # the contract draws random numbers, from the global generator when it is given none
    #   (dropout's generator=None): the caller's-world check leaves the global random state to it
    WRITES: dict = field(default_factory=dict)  # {function: (argument number from 1, ...)}: what the contract lets
    #   a function write into (append's pools, as vLLM writes its cache): the caller's-world check leaves those alone
    BATCH_INDEPENDENT: bool = False  # changing batch item 0 leaves the others unchanged (cases need B)
    GRADIENTS: bool = True  # torch track: the gradient check (False for integer outputs)
    DEVICE: bool | str = False  # torch track: run on the meta device, so tensors made inside must follow the inputs.
    #   "followup": the statement sets no device rule, so a miss passes with the interviewer's question (--strict fails)
    FLOAT32: bool = True  # the float32 check (False for inputs that are not floats)
    HALF: bool = False  # the contract says the output keeps the input's dtype in half precision too: bfloat16 is tried
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
    return t("{stage}: {title}", stage=say(spoken(), f"stage.{fn.stage}"), title=t(fn.english, **_filled(fn.values)))


def id_of(fn) -> str:
    """A check's identity, the same in every language: its English title."""
    with speaking("en"):
        return f"{fn.stage}: {t(fn.english, **_filled(fn.values))}"


def _filled(values: dict) -> dict:
    return {k: v() if callable(v) else v for k, v in values.items()}
