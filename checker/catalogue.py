"""The catalogue: one registry (catalogue.toml) read into Kata records. Never imports torch."""

from __future__ import annotations

import importlib.util
import tomllib
from dataclasses import dataclass
from functools import cache
from pathlib import Path

from checker.errors import RegistryError
from checker.lang import LANGUAGES, t  # LANGUAGES: the languages statements come in

# Where the pristine stubs and the references live: inside the wheel, or beside the package in a clone.
PACKAGE = Path(__file__).resolve().parent


def _bundled(name: str) -> Path:
    inside = PACKAGE / f"_{name}"  # a wheel built by `pip install .`
    return inside if inside.is_dir() else PACKAGE.parent / name  # a clone or an editable install


KATAS = _bundled("katas")
SOLUTIONS = _bundled("solutions")

TRACKS = ("numpy", "torch")
PARTS = ("seeds", "llm", "llm2", "llm3")  # the seed tutorials' catalogue, then the modern LLM set, then the second
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
    summary: str = ""  # what the user writes, one line: the README's catalogue tables (python -m checker.app.dev readme)

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
        if self.suggestions:
            return str(t("no kata named '{name}'. Did you mean {close}? `kata list` shows them all.",
                         name=self.name, close=", ".join(self.suggestions)))
        return str(t("no kata named '{name}'. `kata list` shows them all.", name=self.name))


# The schema of an entry of catalogue.toml: every key it may have, whether it must, and what it holds. A key
# not listed is an error that names it (a typo such as `forbiden = [...]` would otherwise lift the kata's
# forbidden list in silence), and so is a missing one or a track or part that does not exist.
ENTRY_KEYS: dict[str, tuple[bool, type]] = {
    "name": (True, str), "track": (True, str), "title": (True, str), "difficulty": (True, int),
    "targets": (True, list), "forbidden": (False, list), "part": (False, str), "title_zh": (False, str),
    "summary": (False, str),
}


def _close(word: str, choices) -> str:
    """The choices word may have meant, quoted (difflib, as for an unknown kata); '' when none is close."""
    import difflib  # only for a registry in error

    return ", ".join(f"'{c}'" for c in difflib.get_close_matches(word, list(choices), n=3, cutoff=0.6))


def validated(raw: dict, where: str = "checker/catalogue.toml") -> list[dict]:
    """The entries of a parsed catalogue.toml, each held to ENTRY_KEYS; RegistryError names the first fault."""
    extra = sorted(set(raw) - {"kata"})
    if extra or not isinstance(raw.get("kata"), list):
        key = extra[0] if extra else "kata"
        raise RegistryError(t("{file}: unknown table '{key}'; the registry holds only [[kata]] entries",
                              file=where, key=key))
    for number, entry in enumerate(raw["kata"], 1):
        who = f"{entry.get('track', '?')}/{entry.get('name', '?')}"
        for key in entry:
            if key not in ENTRY_KEYS:
                close = _close(key, ENTRY_KEYS)
                keys = ", ".join(ENTRY_KEYS)
                raise RegistryError(
                    t("{file}, entry {number} ({kata}): unknown key '{key}'. Did you mean {close}? An entry's keys "
                      "are {keys}.", file=where, number=number, kata=who, key=key, close=close, keys=keys) if close
                    else t("{file}, entry {number} ({kata}): unknown key '{key}'. An entry's keys are {keys}.",
                           file=where, number=number, kata=who, key=key, keys=keys))
        for key, (required, kind) in ENTRY_KEYS.items():
            if required and key not in entry:
                raise RegistryError(t("{file}, entry {number} ({kata}): the key '{key}' is missing.",
                                      file=where, number=number, kata=who, key=key))
            if key in entry and not isinstance(entry[key], kind):
                raise RegistryError(t("{file}, entry {number} ({kata}): '{key}' should be a {kind}, not {value}.",
                                      file=where, number=number, kata=who, key=key, kind=kind.__name__,
                                      value=repr(entry[key])))
        for key, allowed in (("track", TRACKS), ("part", PARTS)):
            value = entry.get(key, allowed[0])
            if value not in allowed:
                close = _close(value, allowed) or ", ".join(f"'{a}'" for a in allowed)
                raise RegistryError(t("{file}, entry {number} ({kata}): {key} = '{value}' does not exist. Did you "
                                      "mean {close}?", file=where, number=number, kata=who, key=key, value=value,
                                      close=close))
    return raw["kata"]


@cache
def all_katas() -> tuple[Kata, ...]:
    raw = validated(tomllib.loads((PACKAGE / "catalogue.toml").read_text(encoding="utf-8")))
    katas = [
        Kata(
            name=e["name"], track=e["track"], title=e["title"], difficulty=e["difficulty"],
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


def load_solution(kata: Kata):
    """Import the reference answer from solutions/ (never from the user's workspace). Its __stub__: the path of
    the kata's stub, which tells the error model what the user was given and what they wrote."""
    path = SOLUTIONS / kata.file
    spec = importlib.util.spec_from_file_location(f"kata_solution_{kata.track}_{kata.name}", path)
    module = importlib.util.module_from_spec(spec)
    module.__stub__ = str(KATAS / kata.file)
    spec.loader.exec_module(module)
    return module
