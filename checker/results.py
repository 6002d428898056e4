"""What a check run produces, as plain data: no torch, no drawing.

The engine fills these; checker.app.report draws every view of them (the terminal panel, `--json`, the
problems lines, the watch and drill screens, the notebook), and the history records them (pytest's
reports.py is the model: the result is data in one small module).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field, fields

# The order a kata is judged in, and the partial credit of a failing run: the last stage passed in full.
STAGES = ("structure", "shapes", "masking", "numerics", "gradients", "properties", "hygiene")
# pass: every check passed; fail: some did; not_started: the stub still raises NotImplementedError;
# error: the file could not run at all; timeout: a call ran past the time limit.
STATUSES = ("pass", "fail", "not_started", "error", "timeout")
# A check's status, one of a closed set (pytest's outcome, Exercism's status). pass: it passed. fail: the user's code
# is wrong here (it raised, it timed out, it gave another answer). skipped: not judged, an earlier failure says why.
# followup: accepted, with the note in message (an accepted variant or an interviewer's next question; kind says
# which). error: the check could not judge (its own bug, or the process running the user's code died).
CHECK_STATUSES = ("pass", "fail", "skipped", "followup", "error")
# core: what an interviewer marks wrong, it fails the kata. variant: a convention a primary source uses
# (the paper's sqrt(d_model) scale, float32 internals, -1e9 for -inf, assert for a size check) was
# recognised. followup: an edge beyond the textbook answer, raised as the question an interviewer asks
# next. Without --strict a variant or a follow-up passes, with its note; with --strict it fails.
KINDS = ("core", "variant", "followup")


@dataclass
class CheckResult:
    name: str
    stage: str
    status: str  # one of CHECK_STATUSES
    message: str = ""
    kind: str = "core"  # one of KINDS; a variant or follow-up carries its note in message
    line: int | None = None  # where in the user's file the problem is, when a check can tell (editors read it)
    column: int | None = None
    id: str = ""  # the check's English title, never translated: "numerics: matches the reference in float64"
    diagnosis: str | None = None  # the mistake this check's failure names, when it names one (not in message)

    @property
    def passed(self) -> bool:
        """Read from status: passed, or accepted with a note."""
        return self.status in ("pass", "followup")

    @property
    def skipped(self) -> bool:
        return self.status == "skipped"


@dataclass
class KataResult:
    name: str
    track: str
    file: str
    status: str  # one of STATUSES
    seconds: float = 0.0
    checks: list[CheckResult] = field(default_factory=list)
    diagnosis: str | None = None
    line: int | None = None  # the line of the user's file the diagnosis names, when it names one
    stage: str | None = None  # the last stage passed in full: partial credit
    user_seconds: float | None = None
    reference_seconds: float | None = None
    weights: dict | None = None  # {"case", "user", "expected"}: one (T_q, T_k) attention map each
    error: str = ""  # the user's traceback, when their code could not run at all
    output: str = ""  # what the user's code printed

    def followups(self) -> list[CheckResult]:
        """The accepted variants and follow-up questions the run raised (passed or, with --strict, failed)."""
        return [c for c in self.checks if c.kind != "core" and c.message and not c.skipped]

    def last_stage_passed(self) -> str | None:
        """Of the kata's own stages, the one before the first with a failing check (None when structure fails):
        rms_norm, which has no masking stage, never reports 'masking'."""
        own = [s for s in STAGES if any(c.stage == s for c in self.checks)]
        failed = [own.index(c.stage) for c in self.checks if not c.passed]
        first_failed = min(failed, default=len(own))
        return own[first_failed - 1] if first_failed else None


def from_json(text: str) -> list[KataResult]:
    """The results a `kata check --json` document holds ({"katas": [...]}), read back into the objects it was
    written from, their sentences as drawn (the language of the document)."""
    return [from_dict(doc) for doc in json.loads(text)["katas"]]


def from_dict(doc: dict, kind: type = KataResult) -> KataResult:
    """One kata of a --json document as a result (kind: KataResult or a subclass); what is derived from the fields
    (the list of follow-ups) is left out."""
    values = {name: doc[name] for name in _fields(kind) if name in doc}
    values["checks"] = [CheckResult(**{name: c[name] for name in _fields(CheckResult) if name in c})
                        for c in doc.get("checks", ())]
    return kind(**values)


def _fields(kind: type) -> list[str]:
    return [f.name for f in fields(kind) if f.init]
