"""Practise where you write: checker.check() for Python code and notebooks, and the %kata magics.

Every check runs the real `kata check` in a separate Python process, so the caller is never forked,
its torch settings (threads, seeds, default dtype) are never touched, and its own prints never mix
with the user's. Importing this module costs no torch.
"""

from __future__ import annotations

import ast
import inspect
import io
import json
import os
import shlex
import subprocess
import sys
import tempfile
from dataclasses import fields
from pathlib import Path

from checker import catalogue, workspace
from checker.lang import language, speaking, t
from checker.results import CheckResult, KataResult


class Verdict(KataResult):
    """A KataResult (the same fields as `kata check --json`) that draws itself in a notebook."""

    lang: str = "en"

    @classmethod
    def from_json(cls, doc: dict, lang: str) -> Verdict:
        names = {f.name for f in fields(KataResult)}
        values = {k: v for k, v in doc.items() if k in names}
        values["checks"] = [CheckResult(**c) for c in doc.get("checks", ())]
        verdict = cls(**values)
        verdict.lang = lang
        return verdict

    def _render(self, html: bool) -> str:
        from rich.console import Console

        from checker.report import kata_panel

        console = Console(record=True, width=100, file=io.StringIO(), force_terminal=html, color_system="truecolor")
        with speaking(self.lang):
            console.print(kata_panel(self))
        return console.export_html(inline_styles=True) if html else console.export_text()

    def _repr_html_(self) -> str:
        return self._render(html=True)

    def __str__(self) -> str:
        return self._render(html=False)


def check(name: str, obj=None, *, source: str | None = None, lang: str | None = None, strict: bool = False,
          timeout: float | None = None) -> Verdict:
    """Run kata NAME's hidden checks on a class or function of yours, or on source code.

    check("attention", ScaledDotProductAttention) takes the code that defines it (its file, or in a
    notebook the cells that define it and everything they import and define); check("attention",
    source=text) takes the code as text. Nothing is written to your workspace.
    """
    kata = catalogue.find(name)
    if source is None:
        if obj is None:
            raise TypeError(t("check() needs the class or function to check, or source=the code as text"))
        source = source_of(obj)
    with tempfile.TemporaryDirectory(prefix="kata-check-") as folder:
        ws = Path(folder)
        (ws / workspace.MARKER).mkdir()  # a workspace of one file, thrown away after: no history
        path = workspace.kata_file(ws, kata)
        path.parent.mkdir(parents=True)
        path.write_text(source, encoding="utf-8")
        return _run_check(kata, ws, lang, strict, timeout)


def _run_check(kata, ws: Path, lang: str | None, strict: bool, timeout: float | None) -> Verdict:
    lang = language(lang)
    args = ["check", kata.id, "--workspace", str(ws), "--json", "--lang", lang]
    args += ["--strict"] if strict else []
    args += ["--timeout", str(timeout)] if timeout else []
    proc = _kata(args)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(t("kata check gave no verdict (exit {code}): {error}", code=proc.returncode,
                             error=proc.stderr.strip() or proc.stdout.strip())) from None
    return Verdict.from_json(doc["katas"][0], lang)


def _kata(args: list[str]) -> subprocess.CompletedProcess:
    """The real command in a fresh process: nothing of the caller's (threads, prints) is shared."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True,
                          encoding="utf-8", errors="replace", env=env, stdin=subprocess.DEVNULL)


# ----------------------------------------------------------------------------- finding the code


def source_of(obj) -> str:
    """The code that defines obj: its module's file, or in IPython the cells that define it."""
    module = sys.modules.get(getattr(obj, "__module__", ""), None)
    file = getattr(module, "__file__", None)
    if module is not None and module.__name__ != "__main__" and file and Path(file).is_file():
        return Path(file).read_text(encoding="utf-8")
    cells = _ipython_cells()
    if cells:
        return definitions(cells, getattr(obj, "__name__", ""))
    try:
        return Path(inspect.getsourcefile(obj)).read_text(encoding="utf-8")
    except (TypeError, OSError):
        raise ValueError(t("cannot find the code of {obj}: pass it as text, check(NAME, source=...)",
                           obj=repr(obj))) from None


def _ipython_cells() -> list[str]:
    try:
        from IPython import get_ipython
    except ImportError:
        return []
    shell = get_ipython()
    return list(shell.user_ns.get("In", [])) if shell is not None else []


def definitions(cells: list[str], name: str) -> str:
    """The imports, functions and classes of every cell, the last definition of a name winning: the
    file a notebook would be if it held only what defines things (no training loops, no prints)."""
    kept: dict[str, str] = {}
    for cell in cells:
        try:
            tree = ast.parse(_without_magics(cell))
        except SyntaxError:
            continue
        for node in tree.body:
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                kept[ast.unparse(node)] = ast.unparse(node)
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                kept.pop(node.name, None)  # a later definition replaces the earlier one, in its own place
                kept[node.name] = ast.get_source_segment(_without_magics(cell), node) or ast.unparse(node)
    if name and name not in kept:
        raise ValueError(t("no cell defines {name}: run the cell that defines it first, or pass source=...", name=name))
    return "\n\n".join(kept.values()) + "\n"


def _without_magics(cell: str) -> str:
    return "\n".join("" if line.lstrip().startswith(("%", "!")) else line for line in cell.splitlines())


# ----------------------------------------------------------------------------- the IPython extension


def save_cell(name: str, code: str) -> Path:
    """Write a cell into the workspace as kata NAME's file; a different version there is kept as a backup."""
    kata = catalogue.find(name)
    ws = workspace.locate(None, announce=lambda message: None)
    path = workspace.kata_file(ws, kata)
    if path.is_file() and path.read_text(encoding="utf-8") != code:
        from checker.practice import fresh_folder  # the folder `kata reset` keeps its backups in, never reused

        backup = workspace.kata_file(fresh_folder(ws / "backups"), kata)
        backup.parent.mkdir(parents=True, exist_ok=True)
        backup.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code, encoding="utf-8")
    return path


def load_ipython_extension(ipython) -> None:
    """%load_ext checker: %%kata NAME [--strict] [--lang zh] checks the cell; %kata hint|show|list|stats ..."""
    from IPython.core.magic import Magics, line_cell_magic, magics_class
    from IPython.display import display

    @magics_class
    class KataMagics(Magics):
        @line_cell_magic
        def kata(self, line: str, cell: str | None = None):
            words = shlex.split(line)
            if cell is None:  # %kata hint attention, %kata show attention --lang zh, ...
                proc = _kata(words)
                print(proc.stdout.rstrip("\n"), file=sys.stdout)
                if proc.stderr.strip():
                    print(proc.stderr.rstrip("\n"), file=sys.stderr)
                return None
            if not words:
                print(t("%%kata needs the kata's name, e.g. %%kata attention"), file=sys.stderr)
                return None
            kata = catalogue.find(words[0])
            lang = words[words.index("--lang") + 1] if "--lang" in words[:-1] else None
            path = save_cell(kata.id, cell)
            ws = path.parents[1]
            display(_run_check(kata, ws, lang, "--strict" in words, None))
            return None

    ipython.register_magics(KataMagics)
