"""The catalogue: one registry (catalogue.toml) read into Kata records. Never imports torch."""

from __future__ import annotations

import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from checker.lang import LANGUAGES  # noqa: F401 - the languages statements come in

# Where the pristine stubs and the references live: inside the wheel, or beside the package in a clone.
PACKAGE = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    inside = PACKAGE / f"_{name}"  # a wheel built by `pip install .`
    return inside if inside.is_dir() else PACKAGE.parent / name  # a clone or an editable install


KATAS = _bundled("katas")
SOLUTIONS = _bundled("solutions")

TRACKS = ("numpy", "torch")
PARTS = ("seeds", "llm", "llm2")  # the seed tutorials' catalogue, then the modern LLM set, then the second
DEFAULT_TRACK = "torch"


@dataclass(frozen=True)
class Kata:
    name: str
    track: str
    title: str
    difficulty: int
    targets: tuple[str, ...]
    forbidden: tuple[str, ...]
    order: int
    part: str = "seeds"
    title_zh: str = ""
    summary: str = ""  # what the user writes, one line: the README's catalogue tables (python -m checker.dev readme)

    def title_in(self, lang: str) -> str:
        """The title in lang (Chinese where the registry has it, else English)."""
        return self.title_zh if lang == "zh" and self.title_zh else self.title

    @property
    def id(self) -> str:
        """What the user types: `attention` for the torch track, `numpy/attention` for NumPy."""
        return self.name if self.track == DEFAULT_TRACK else f"{self.track}/{self.name}"

    @property
    def file(self) -> str:
        """Path of the kata's file relative to katas/, solutions/ and the workspace."""
        return f"{self.track}/{self.name}.py"

    @property
    def code(self) -> str:
        """`torch_rope`: the name of the kata's folder checker/checks/TRACK_NAME/."""
        return f"{self.track}_{self.name}"

    @property
    def folder(self) -> Path:
        """Its hidden parts: checks.py, zh.toml, statement.md, statement.zh.md, variants/, test_reference.py."""
        return PACKAGE / "checks" / self.code

    @property
    def checks_module(self) -> str:
        return f"checker.checks.{self.code}.checks"

    def statement_path(self, lang: str = "en") -> Path:
        suffix = "" if lang == "en" else f".{lang}"
        return self.folder / f"statement{suffix}.md"


class UnknownKata(LookupError):
    def __init__(self, name: str, suggestions: list[str]):
        self.name, self.suggestions = name, suggestions
        super().__init__(name)

    def __str__(self) -> str:
        """Said in the language spoken when it is printed."""
        from checker.lang import t

        if self.suggestions:
            return str(t("no kata named '{name}'. Did you mean {close}? `kata list` shows them all.",
                         name=self.name, close=", ".join(self.suggestions)))
        return str(t("no kata named '{name}'. `kata list` shows them all.", name=self.name))


@cache
def all_katas() -> tuple[Kata, ...]:
    raw = tomllib.loads((PACKAGE / "catalogue.toml").read_text(encoding="utf-8"))["kata"]
    katas = [
        Kata(
            name=e["name"], track=e["track"], title=e["title"], difficulty=int(e["difficulty"]),
            targets=tuple(e["targets"]), forbidden=tuple(e.get("forbidden", ())), order=i,
            part=e.get("part", "seeds"), title_zh=e.get("title_zh", ""), summary=e.get("summary", ""),
        )
        for i, e in enumerate(raw)
    ]
    # learning path: the seeds' part, then the LLM part, then the second LLM set; registry order inside a part
    return tuple(sorted(katas, key=lambda k: (PARTS.index(k.part), k.order)))


def find(name: str) -> Kata:
    """Resolve `attention`, `torch/attention` or `numpy/attention`."""
    wanted = name.strip().replace("\\", "/").strip("/")  # torch\attention.py from a Windows editor too
    if wanted.endswith(".py"):
        wanted = wanted[:-3]
    for kata in all_katas():
        if wanted in (kata.id, f"{kata.track}/{kata.name}"):
            return kata
    ids = [k.id for k in all_katas()]
    import difflib  # only for a name not found: suggestions

    close = difflib.get_close_matches(wanted, ids, n=3, cutoff=0.5)
    close += [i for i in ids if wanted and wanted in i and i not in close]
    raise UnknownKata(name, close[:4])

