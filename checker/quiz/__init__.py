"""The oral round: interview questions with checked answers (`kata quiz`). Never imports torch.

A question is data (checker/quiz/bank/*.toml, both languages side by side); the sources it cites are in
checker/quiz/sources.toml. Three kinds:
- choice: options, one or more right; every wrong option says why it is wrong;
- order: steps written in their right order, shown shuffled;
- numeric: a generator in checker.quiz.numbers draws a real model's configuration and computes the answer.
A question is *drawn* with a seed: the seed fixes the numbers and the shuffle, so `ID@SEED` names exactly
what was asked and can be answered later, from anywhere (`kata quiz --answer ID@SEED ANSWER`).
"""

from __future__ import annotations

import functools
import math
import random
import re
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from checker.errors import UsageError
from checker.lang import tr

HERE = Path(__file__).parent
KINDS = ("choice", "order", "numeric")
# The topics, in the order a candidate meets them; a question's topic is one of these keys
TOPICS = {
    "attention": "attention",
    "heads": "multi-head, GQA, MQA, MLA",
    "norm": "normalisation",
    "positions": "positions",
    "ffn": "FFN and activations",
    "model": "the whole model and decoding",
    "training": "training",
    "efficiency": "efficiency",
    "post_training": "post-training (DPO, GRPO)",
}  # said through tr(): their Chinese is in checker/zh.toml
# A numeric answer within this share of the computed one is right: 1.05M for 1,050,624 is within 0.1%;
# 2% also forgives a candidate who rounds d_ff or a vocabulary, never a missing factor of 2.
TOLERANCE = 0.02
LETTERS = "ABCDEFGHIJ"


@dataclass(frozen=True)
class Question:
    id: str  # topic-free, stable, never translated: "why-scale", "kv-cache-bytes"
    topic: str
    kind: str
    kata: str  # the kata that drills the same idea
    source: str  # a key of sources.toml
    where: str  # a section, an equation, a heading of the tutorial ("" if the source as a whole)
    text: dict  # {"en": ..., "zh": ...}; a numeric one has {placeholders}
    explain: dict
    options: tuple = ()  # choice: ({"en", "zh", "right", "why_en", "why_zh"}, ...)
    steps: tuple = ()  # order: ({"en", "zh"}, ...) in the right order
    generator: str = ""  # numeric: a function of checker.quiz.numbers


@dataclass
class Drawn:
    """A question as asked: its seed, its text in one language, what is shown and what is right."""

    question: Question
    seed: int
    lang: str
    text: str
    shown: list[str] = field(default_factory=list)  # choice: the options; order: the steps, shuffled
    right: list[int] = field(default_factory=list)  # choice: indexes of shown right; order: shown indexes in order
    value: float | None = None  # numeric: the answer
    unit: str = ""  # numeric: count, bytes, flops or plain
    explanation: str = ""
    why: dict = field(default_factory=dict)  # choice: shown index -> why that option is wrong

    @property
    def ref(self) -> str:
        return f"{self.question.id}@{self.seed}"

    def as_json(self) -> dict:
        """What a script is shown: the question without its answer."""
        entry = {"id": self.question.id, "ref": self.ref, "topic": self.question.topic, "kind": self.question.kind,
                 "text": self.text, "kata": self.question.kata, "answer_with": f"kata quiz --answer {self.ref} ANSWER"}
        if self.question.kind == "choice":
            entry["options"] = {LETTERS[i]: option for i, option in enumerate(self.shown)}
            entry["choose"] = "several" if len(self.right) > 1 else "one"
        elif self.question.kind == "order":
            entry["steps"] = {str(i + 1): step for i, step in enumerate(self.shown)}
        else:
            entry["unit"] = self.unit
            entry["tolerance"] = TOLERANCE
        return entry


@dataclass
class Verdict:
    right: bool
    given: str
    expected: str  # the right answer, as it would be typed
    explanation: str
    notes: list[str] = field(default_factory=list)  # why each wrong option picked is wrong; where an order broke

    def as_json(self) -> dict:
        return {"right": self.right, "given": self.given, "expected": self.expected,
                "explanation": self.explanation, "notes": self.notes}


# ----------------------------------------------------------------------------- the bank


def _question(entry: dict) -> Question:
    """One [[question]] of a bank file, as a Question; KeyError or ValueError if it is malformed."""
    return Question(id=entry["id"], topic=entry["topic"], kind=entry["kind"], kata=entry["kata"],
                    source=entry["source"], where=entry.get("where", ""),
                    text={"en": entry["en"], "zh": entry["zh"]},
                    explain={"en": entry["explain_en"], "zh": entry["explain_zh"]},
                    options=tuple(entry.get("options", ())), steps=tuple(entry.get("steps", ())),
                    generator=entry.get("generator", ""))


@functools.cache
def bank() -> dict[str, Question]:
    """Every question by id, in file order (bank/*.toml in name order)."""
    questions: dict[str, Question] = {}
    for path in sorted((HERE / "bank").glob("*.toml")):
        for entry in tomllib.loads(path.read_text(encoding="utf-8")).get("question", []):
            q = _question(entry)
            if q.id in questions:
                raise ValueError(f"{path.name}: question id {q.id!r} is used twice")
            questions[q.id] = q
    return questions


@functools.cache
def sources() -> dict[str, dict]:
    return tomllib.loads((HERE / "sources.toml").read_text(encoding="utf-8"))


def cited(q: Question, lang: str) -> str:
    """'the paper walkthrough, §3.2.1' in lang."""
    title = sources()[q.source][lang]
    return f"{title}{'，' if lang == 'zh' else ', '}{q.where}" if q.where else title


def find(ref: str) -> tuple[Question, int | None]:
    """ID or ID@SEED as a question and its seed; a UsageError (with the nearest ids) for an unknown one."""
    qid, _, seed = ref.partition("@")
    if qid not in bank():
        import difflib

        close = difflib.get_close_matches(qid, bank(), n=3)
        raise UsageError(tr("no question '{ref}'. Did you mean: {close}?", ref=qid, close=", ".join(close))
                         if close else tr("no question '{ref}' (`kata quiz --list` lists them)", ref=qid))
    if seed and not seed.isdigit():
        raise UsageError(tr("'{ref}': what follows @ is the draw's number, e.g. {example}", ref=ref,
                           example=f"{qid}@42"))
    return bank()[qid], int(seed) if seed else None


# ----------------------------------------------------------------------------- drawing


def draw(q: Question, seed: int, lang: str) -> Drawn:
    """The question as asked with this seed, in lang (en or zh)."""
    rng = random.Random(f"{q.id}@{seed}")
    if q.kind == "numeric":
        from checker.quiz import numbers

        values = getattr(numbers, q.generator)(rng)
        shown = {k: numbers.shown(v) for k, v in values.items()}
        return Drawn(q, seed, lang, q.text[lang].format(**shown), value=float(values["answer"]),
                     unit=values.get("unit", "count"), explanation=q.explain[lang].format(**shown))
    if q.kind == "choice":
        order = list(range(len(q.options)))
        rng.shuffle(order)
        options = [q.options[i] for i in order]
        why = {i: o[f"why_{lang}"] for i, o in enumerate(options) if not o.get("right")}
        return Drawn(q, seed, lang, q.text[lang], shown=[o[lang] for o in options],
                     right=[i for i, o in enumerate(options) if o.get("right")], explanation=q.explain[lang], why=why)
    order = list(range(len(q.steps)))
    while order == sorted(order):  # shown in the right order is no question
        rng.shuffle(order)
    shown = [q.steps[i][lang] for i in order]
    return Drawn(q, seed, lang, q.text[lang], shown=shown, right=[order.index(i) for i in range(len(order))],
                 explanation=q.explain[lang])


def new_seed() -> int:
    return random.randrange(1, 10_000)


# ----------------------------------------------------------------------------- judging


def judge(d: Drawn, given: str) -> Verdict:
    """Whether the answer typed is right, with what is right and why; a UsageError if it cannot be read."""
    given = given.strip()
    if d.question.kind == "choice":
        picked = _letters(given, len(d.shown))
        notes = [f"{LETTERS[i]}: {d.why[i]}" for i in sorted(picked) if i in d.why]
        missed = [LETTERS[i] for i in d.right if i not in picked]
        if missed and not notes:
            notes.append(tr("also right: {letters}", letters=", ".join(missed)))
        return Verdict(sorted(picked) == d.right, given, expected(d), d.explanation, notes)
    if d.question.kind == "order":
        typed = _sequence(given, len(d.shown))
        notes = []
        for place, (got, want) in enumerate(zip(typed, d.right), 1):
            if got != want:
                notes.append(tr("step {place} is “{want}”, not “{got}”", place=place, want=d.shown[want],
                               got=d.shown[got]))
                break
        return Verdict(typed == d.right, given, expected(d), d.explanation, notes)
    readings = quantities(given, d.unit)
    right = any(math.isclose(v, d.value, rel_tol=TOLERANCE) for v in readings)
    return Verdict(right, given, expected(d), d.explanation)


def expected(d: Drawn) -> str:
    """The right answer as it would be typed: B, A,C; 3 1 2 4; 1,050,624 (≈ 1.05M)."""
    if d.question.kind == "choice":
        return "".join(LETTERS[i] for i in d.right)
    if d.question.kind == "order":
        return " ".join(str(i + 1) for i in d.right)
    return spelled(d.value, d.unit)


def _letters(given: str, count: int) -> set[int]:
    letters = re.sub(r"[\s,，、;；/]+", "", given).upper()
    valid = LETTERS[:count]
    if not letters or any(ch not in valid for ch in letters):
        raise UsageError(tr("answer with the letters of the options you choose, e.g. A or A,C (here {first} to {last})",
                           first=valid[0], last=valid[-1]))
    return {valid.index(ch) for ch in letters}


def _sequence(given: str, count: int) -> list[int]:
    parts = re.findall(r"\d+", given)
    if count <= 9 and len(parts) == 1 and len(parts[0]) == count:  # "3142"
        parts = list(parts[0])
    numbers = [int(p) - 1 for p in parts]
    if sorted(numbers) != list(range(count)):
        raise UsageError(tr("answer with the step numbers 1 to {count}, each once, in the right order (e.g. {example})",
                           count=count, example=" ".join(str(i) for i in range(count, 0, -1))))
    return numbers


# A multiplier after a number: SI, the common short forms, and the Chinese 万 and 亿
_SCALE = {"": 1, "k": 1e3, "K": 1e3, "thousand": 1e3, "M": 1e6, "m": 1e6, "million": 1e6, "mn": 1e6,
          "B": 1e9, "G": 1e9, "bn": 1e9, "billion": 1e9, "T": 1e12, "trillion": 1e12,
          "万": 1e4, "亿": 1e8, "千": 1e3, "百万": 1e6, "十亿": 1e9}
# A size in bytes: KB, MB, GB and TB are read both ways (1000ⁿ and 1024ⁿ), since both are in common use
_BYTES = {"b": (1,), "byte": (1,), "bytes": (1,), "字节": (1,),
          "kb": (1e3, 2**10), "mb": (1e6, 2**20), "gb": (1e9, 2**30), "tb": (1e12, 2**40),
          "kib": (2**10,), "mib": (2**20,), "gib": (2**30,), "tib": (2**40,)}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d[\d,_ ]*\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*"
                     r"(?:(?:[x×*]|\s)\s*10\s*(?:\^|\*\*)\s*([-+]?\d+))?\s*([^\d\s]*)\s*$")


def quantities(given: str, unit: str) -> list[float]:
    """Every reading of a typed number: 1050624, 1,050,624, 1.05M, 1.05e6, 1.05×10^6, 105 万, 2 GiB, 2GB (both
    ways); in a bytes question B is a byte, elsewhere a billion (7B). A UsageError if it is no number."""
    match = _NUMBER.match(given.replace("，", ","))
    if not match:
        raise UsageError(tr("'{given}' is not a number (write it as 1050624, 1.05M or 1.05e6)", given=given))
    mantissa = float(re.sub(r"[,_ ]", "", match.group(1)))
    if match.group(2):
        mantissa *= 10 ** int(match.group(2))
    suffix = match.group(3)
    if unit == "bytes":
        head, tail = re.match(r"^(.*?)((?:[kKmMgGtT]i?)?[bB](?:ytes?)?|字节)?$", suffix).groups()
        if tail and tail.lower() in _BYTES:
            scale = _SCALE.get(head)
            if scale is not None:
                return [mantissa * scale * b for b in _BYTES[tail.lower()]]
    if suffix in _SCALE:
        return [mantissa * _SCALE[suffix]]
    raise UsageError(tr("'{given}': unknown unit '{suffix}' (write 1.05M or 1.05e6, or bytes as 2GiB)",
                       given=given, suffix=suffix))


def spelled(value: float, unit: str) -> str:
    """The right answer as a person would say it: 1,050,624 (≈ 1.05M); 2,147,483,648 bytes (2 GiB)."""
    exact = f"{value:,.0f}" if float(value).is_integer() else f"{value:.4g}"
    if unit == "bytes" and value >= 2**10:
        power = min(int(math.log(value, 1024)), 4)
        return f"{exact} B (= {value / 1024 ** power:.3g} {('KiB', 'MiB', 'GiB', 'TiB')[power - 1]})"
    if abs(value) >= 1e15:  # past trillions, as scientists write it
        return f"{value:.3e}".replace("e+", "e")
    if abs(value) >= 1e4:
        power = min(int(math.log10(abs(value)) // 3), 4)
        return f"{exact} (≈ {value / 1000 ** power:.3g}{('', 'K', 'M', 'B', 'T')[power]})"
    return exact
