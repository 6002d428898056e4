"""Tools for the people who write katas, not for the people who practise them.

    python -m checker.app.dev new NAME [--track torch|numpy] [--part seeds|llm|llm2|llm3]
        makes a kata's four places: its entry in checker/catalogue.toml, the stub katas/TRACK/NAME.py,
        the reference solutions/TRACK/NAME.py and its folder checker/checks/TRACK_NAME/ (checks, both
        statements, the Chinese catalogue, variants/, the reference test), each a starting point to fill;
    python -m checker.app.dev readme
        writes the catalogue's tables in README.md from checker/catalogue.toml (each kata's summary).

tests/checks/test_catalogue.py names whatever a kata still lacks; run it after `new`.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

from checker import catalogue
from checker.lang import LANGUAGES, chosen_language, speaking, tr

ROOT = catalogue.PACKAGE.parent  # the repository: checker/, katas/, solutions/, README.md
_NAME = re.compile(r"[a-z][a-z0-9_]*\Z")
_TRACK_WORDS = {"torch": "PyTorch", "numpy": "NumPy"}


# ----------------------------------------------------------------------------- the README's tables

def table(katas, part: str) -> str:
    """The Markdown table of one part of the catalogue, in learning-path order."""
    rows = ["| kata | track | what you write |", "|---|---|---|"]
    rows += [f"| `{k.id}` | {_TRACK_WORDS[k.track]} | {k.summary} |" for k in katas if k.part == part]
    return "\n".join(rows)


def readme_with_tables(text: str, katas) -> str:
    """text with every `<!-- catalogue: PART -->` ... `<!-- end of catalogue -->` block drawn anew."""
    def draw(match):
        return f"{match.group(1)}\n{table(katas, match.group(2))}\n{match.group(3)}"

    return re.sub(r"(<!-- catalogue: (\w+) -->)\n.*?\n(<!-- end of catalogue -->)", draw, text, flags=re.DOTALL)


def cmd_readme() -> int:
    path = ROOT / "README.md"
    text = path.read_text(encoding="utf-8")
    new = readme_with_tables(text, catalogue.all_katas())
    if new != text:
        path.write_text(new, encoding="utf-8")
    print(f"{path}: {'updated' if new != text else 'already up to date'}")
    return 0


# ----------------------------------------------------------------------------- a new kata

def _target(name: str, track: str) -> str:
    """A torch kata is a module class (rope -> Rope), a NumPy kata a function (its name)."""
    return "".join(w.capitalize() for w in name.split("_")) if track == "torch" else name


def _entry(name: str, track: str, part: str, target: str) -> str:
    words = name.replace("_", " ")
    return (f'\n[[kata]]\nname = "{name}"\ntrack = "{track}"\npart = "{part}"\ntitle = "{words.capitalize()}"\n'
            f'title_zh = "{words}"\nsummary = "{words}"\ndifficulty = 2\ntargets = ["{target}"]\n'
            f'forbidden = []\n')


_STUB_TORCH = '''"""{title}.

Shapes legend: B = batch size, T = sequence length, D = d_model.
"""

import torch
from torch import nn


class {target}(nn.Module):
    def __init__(self, d_model: int):
        super().__init__()
        {init}

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x: (B, T, D) -> (B, T, D)."""
        {forward}
'''

_STUB_NUMPY = '''"""{title}.

Shapes legend: B = batch size, T = sequence length, D = d_model.
"""

import numpy as np


def {target}(x: np.ndarray) -> np.ndarray:
    """x: (B, T, D) -> (B, T, D)."""
    {forward}
'''

# A reference that runs, so the new kata works end to end from the start: replace it with the real one.
_PLACEHOLDER = {"torch": ("self.proj = nn.Linear(d_model, d_model)", "return self.proj(x)"),
                "numpy": ("", "return np.tanh(x)")}
_UNWRITTEN = ("raise NotImplementedError", "raise NotImplementedError")

_CHECKS = '''"""Hidden checks: {title}."""

import torch

from checker.kit import case

TARGET = "{target}"
OUTPUTS = [("output", "(B, T, D)")]

# Every dimension its own size, so a transposed or mixed-up axis cannot pass by coincidence.
CASES = [
    case(1, B=2, T=5, D=6),
    case(2, B=3, T=4, D=8),
]
{init}

def inputs(c, dtype):
    x = torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64)
    return ({convert},)
'''

_STATEMENT = '''# {title}

Say what the user writes and why an interviewer asks for it, in the seed's words.

## Hints

1. The concept.
2. The shapes and the steps.
3. A sentence, then the code on its own lines:

   ```python
   return x
   ```
'''

_STATEMENT_ZH = '''# {title}

用种子教程的说法写清楚要实现什么、面试官为什么会问。

## 提示

1. 概念。
2. 形状与步骤。
3. 一句话，然后把代码放在单独的代码块里：

   ```python
   return x
   ```
'''

_ZH = '''# The Chinese of this kata's sentences: its check titles, failures, diagnoses and follow-up questions,
# and the steps of its reference answer. English template = Chinese template, the same {named}
# placeholders on both sides (tests/commands/test_messages.py holds that).
'''

_REFERENCE_TEST = '''"""The {id} reference against an independent implementation."""

import pytest

from checker import catalogue, engine


@pytest.mark.skip(reason="write the independent implementation this reference is compared with")
def test_reference_equals_an_independent_implementation():
    engine.load_solution(catalogue.find("{id}"))
'''


def places(track: str = "TRACK", name: str = "NAME") -> list[tuple[str, str]]:
    """Every place a new kata touches, relative to the repository, with what it holds: `dev new --help` lists
    them, new_kata writes every file among them (tests/checks/test_catalogue.py holds the two together)."""
    folder = f"checker/checks/{track}_{name}"
    return [
        ("checker/catalogue.toml", tr("its entry (name, track, part, title, title_zh, summary, difficulty, targets, "
                                     "forbidden; any other key is refused); the order of the entries is the learning "
                                     "path")),
        (f"katas/{track}/{name}.py", tr("the stub: the final signatures and docstrings, each opening with a shape "
                                       "legend, every body ending in raise NotImplementedError")),
        (f"solutions/{track}/{name}.py", tr("the reference answer, its steps numbered # 1) ...")),
        (f"{folder}/__init__.py", tr("the kata's folder: everything hidden")),
        (f"{folder}/checks.py", tr("the hidden checks: the options of kit.Options, inputs(case, dtype), init(case)")),
        (f"{folder}/zh.toml", tr("the Chinese of its sentences and of its reference's steps, keyed by their English "
                                "(a key that is no sentence of the kata is refused)")),
        (f"{folder}/statement.md", tr("the statement, with three numbered hints (concept, shapes and steps, "
                                     "near-code)")),
        (f"{folder}/statement.zh.md", tr("the same in Chinese")),
        (f"{folder}/test_reference.py", tr("the reference against an independent implementation")),
        (f"{folder}/variants/", tr("wrong_*.py (first line # expect: TEXT) and right_*.py, written by hand: new makes "
                                  "the folder empty")),
        (f"{folder}/driver.py", tr("only if the checks run code of their own around the user's: a driver, a "
                                  "function passed to kit.drive (drivers several katas share: checker/checks/child/)")),
        ("README.md", tr("the catalogue's tables: python -m checker.app.dev readme draws them from the summaries")),
    ]


def places_text() -> str:
    """The places, one a line, for `dev new --help`."""
    lines = [tr("Every place a new kata touches (TRACK_NAME: torch_rope for rope in the torch track):")]
    for path, what in places():
        lines += [f"  {path}", f"      {what}"]
    return "\n".join(lines)


def new_kata(root: Path, name: str, track: str, part: str) -> list[Path]:
    """Write the four places of a new kata under root; returns the files written."""
    from checker.errors import UsageError

    if not _NAME.match(name):
        raise UsageError(f"a kata's name is lower case letters, digits and _, starting with a letter: {name!r}")
    code, target = f"{track}_{name}", _target(name, track)
    folder = root / "checker" / "checks" / code
    registry = root / "checker" / "catalogue.toml"
    taken = {(e["track"], e["name"]) for e in tomllib.loads(registry.read_text(encoding="utf-8"))["kata"]}
    if (track, name) in taken or folder.exists():
        raise UsageError(f"{track}/{name} exists already ({registry} or {folder})")
    title = name.replace("_", " ").capitalize()
    torch_track = track == "torch"
    files = {
        root / "katas" / track / f"{name}.py": (_STUB_TORCH if torch_track else _STUB_NUMPY).format(
            title=title, target=target, init=_UNWRITTEN[0], forward=_UNWRITTEN[1]),
        root / "solutions" / track / f"{name}.py": (_STUB_TORCH if torch_track else _STUB_NUMPY).format(
            title=title, target=target, init=_PLACEHOLDER[track][0], forward=_PLACEHOLDER[track][1]),
        folder / "__init__.py": f'"""The hidden parts of the kata `{name if torch_track else code.replace("_", "/", 1)}`."""\n',
        folder / "checks.py": _CHECKS.format(
            title=title, target=target,
            init='\n\ndef init(c):\n    return {"d_model": c.D}\n\n' if torch_track else "\n",
            convert="x.to(getattr(torch, dtype))" if torch_track else "x.numpy().astype(dtype)"),
        folder / "zh.toml": _ZH,
        folder / "statement.md": _STATEMENT.format(title=title),
        folder / "statement.zh.md": _STATEMENT_ZH.format(title=title),
        folder / "test_reference.py": _REFERENCE_TEST.format(id=name if torch_track else f"{track}/{name}"),
    }
    (folder / "variants").mkdir(parents=True)
    for path, content in files.items():
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(content, encoding="utf-8")
    with registry.open("a", encoding="utf-8") as f:
        f.write(_entry(name, track, part, target))
    return [registry, *files]


def cmd_new(root: Path, name: str, track: str, part: str) -> int:
    written = new_kata(root, name, track, part)
    for path in written:
        print(f"  {path.relative_to(root)}")
    code = f"{track}_{name}"
    print(f"Next: fill each of them in, add checker/checks/{code}/variants/wrong_*.py (first line "
          f"'# expect: TEXT') and right_*.py, then `python -m checker.app.dev readme` and "
          f"`python -m pytest tests/checks/test_catalogue.py -k {name}`, which names whatever is still missing.")
    return 0


def main(argv=None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    with speaking(chosen_language(argv)):  # --lang zh, KATA_LANG or the locale, as for `kata`
        return _main(argv)


def _main(argv: list[str]) -> int:
    from checker.errors import EXIT_USAGE, UsageError

    parser = argparse.ArgumentParser(prog="python -m checker.app.dev", description=__doc__.splitlines()[0])
    parser.add_argument("--lang", choices=LANGUAGES, help=argparse.SUPPRESS)
    sub = parser.add_subparsers(dest="command", required=True)
    new = sub.add_parser("new", help=tr("make a new kata: every place it touches"), epilog=places_text(),
                         formatter_class=argparse.RawDescriptionHelpFormatter)
    new.add_argument("name")
    new.add_argument("--track", choices=catalogue.TRACKS, default=catalogue.DEFAULT_TRACK)
    new.add_argument("--part", choices=catalogue.PARTS, default=catalogue.PARTS[-1])
    new.add_argument("--root", type=Path, default=ROOT, help=tr("the repository (default: this one)"))
    sub.add_parser("readme", help="draw the catalogue's tables in README.md")
    args = parser.parse_args(argv)
    try:
        if args.command == "new":
            return cmd_new(args.root, args.name, args.track, args.part)
        return cmd_readme()
    except UsageError as err:
        print(f"python -m checker.app.dev: {err}", file=sys.stderr)
        return EXIT_USAGE


if __name__ == "__main__":
    sys.exit(main())
