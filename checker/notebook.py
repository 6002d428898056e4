"""Practise where you write: checker.check() for Python code and notebooks, and the %kata magics.

Every check runs the real `kata check` in a separate Python process, so the caller is never forked,
its torch settings (threads, seeds, default dtype) are never touched, and its own prints never mix
with the user's. Importing this module costs no torch.

check(name, obj) hands the checker exactly obj: the text that defined it (its cell, or its file), every
module-level name that text reads (imports, constants, helper functions and classes, each by the statement
that last bound it, and what those read in turn), and obj under the name the kata asks for. The report names
the cell or the file, never the temporary copy the check ran on; the check is recorded in the workspace's
history as `kata check` records one.
"""

from __future__ import annotations

import ast
import functools
import inspect
import io
import json
import linecache
import math
import os
import re
import shlex
import subprocess
import symtable
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

from checker import catalogue
from checker.lang import chosen_language, language, speaking, t
from checker.results import KataResult, from_dict
from checker.state.workspace import MARKER, WorkspaceError, kata_file, locate

# ----------------------------------------------------------------------------- the verdict

# The notebook's report is a fragment, never a page: no <style> for body, no colour of its own, so the
# notebook's theme (light or dark) shows through. The font is the one rich gives its own notebook output.
_HTML = ('<pre style="white-space:pre;overflow-x:auto;line-height:normal;'
         "font-family:Menlo,'DejaVu Sans Mono',consolas,'Courier New',monospace\">{code}</pre>")


@functools.cache
def _accents():
    """The report's colours (pass, fail, notes) as HTML: readable on a white and a near-black page alike.
    Text without a colour of its own gets none and so the theme's; dim text is a grey between the two."""
    from rich.terminal_theme import TerminalTheme

    grey = (128, 128, 128)
    return TerminalTheme(grey, grey, [(64, 64, 64), (205, 49, 49), (35, 150, 75), (185, 135, 0), (45, 110, 210),
                                      (175, 70, 175), (20, 145, 165), (235, 235, 235)])


class Verdict(KataResult):
    """A KataResult (the same fields as `kata check --json`) that draws itself as the report: in a notebook in
    the notebook's colours, in IPython's terminal as the text report (coloured where the terminal takes it)."""

    lang: str = "en"
    verbose: bool = False  # %%kata NAME --verbose: skipped checks too

    @classmethod
    def from_json(cls, doc: dict, lang: str) -> Verdict:
        """One kata of a `kata check --json` document, drawn in lang."""
        verdict = from_dict(doc, cls)
        verdict.lang = lang
        return verdict

    def _draw(self, **console_options):
        """A console that has drawn the report (kata_panel, as `kata check` draws it) in the verdict's language."""
        from rich.console import Console

        from checker.app.report import kata_panel

        # force_jupyter=False: in a kernel rich would otherwise show the panel itself, a second output
        console = Console(file=io.StringIO(), force_jupyter=False, highlight=False, **console_options)
        with speaking(self.lang):
            console.print(kata_panel(self, verbose=self.verbose))
        return console

    def _repr_html_(self) -> str:
        console = self._draw(record=True, width=100, force_terminal=True, color_system="truecolor")
        return console.export_html(theme=_accents(), inline_styles=True, code_format=_HTML)

    def _repr_pretty_(self, printer, cycle: bool) -> None:
        """IPython's text front ends (its terminal, jupyter console): the report, not the dataclass."""
        from rich.console import Console

        screen = Console(force_jupyter=False)  # stdout as it is: a terminal's width and colours, NO_COLOR
        console = self._draw(width=screen.width, force_terminal=screen.is_terminal, no_color=screen.no_color,
                             color_system=screen.color_system if screen.is_terminal else None)
        printer.text(console.file.getvalue().rstrip("\n"))

    def __str__(self) -> str:
        return self._draw(width=100, color_system=None).file.getvalue()


# ----------------------------------------------------------------------------- check()


def check(name: str, obj=None, *, source: str | None = None, lang: str | None = None, strict: bool = False,
          timeout: float | None = None, workspace: str | os.PathLike | None = None) -> Verdict:
    """Run kata NAME's hidden checks on a class or function of yours, or on source code.

    check("attention", MyAttention) checks exactly MyAttention, under the name the kata asks for, with the
    module-level names its code reads (imports, constants, helpers), from its cell or its file. A kata that
    asks for several names takes a list of objects named as it names them, or a dict {name: obj}; a name it
    asks for and is not given comes from obj's module (your notebook) when that defines it.
    check("attention", source=text) checks the code as text. Your workspace's file is left as it is; the
    check is recorded in the workspace's history (found as `kata check` finds it, or workspace=DIR).
    """
    kata = catalogue.find(name)
    lang = language(lang)
    if source is not None:
        code = Code.of_text(source)
    elif obj is None:
        raise TypeError(t("check() needs the class or function to check, or source=the code as text"))
    else:
        code = gather(kata, obj)
    home = locate(os.fspath(workspace) if workspace else None, announce=lambda message: print(message, file=sys.stderr))
    options = (["--strict"] if strict else []) + (["--timeout", str(timeout)] if timeout else [])
    with tempfile.TemporaryDirectory(prefix="kata-check-") as folder:
        scratch = Path(folder)
        (scratch / MARKER).mkdir()  # a workspace of one file, thrown away after
        path = kata_file(scratch, kata)
        path.parent.mkdir(parents=True)
        path.write_text(code.text, encoding="utf-8")
        verdict, _ = _run_check(kata, scratch, lang, options, home)
        _record(verdict, home)  # while the file is there: the history keeps the hash of the code checked
    code.relabel(verdict, str(path))
    return verdict


def _record(verdict: Verdict, home: Path) -> None:
    """Into the workspace's history, as `kata check` records a check: `kata stats` and `kata next` count it."""
    from checker.state.progress import ProgressError, open_progress

    try:
        progress = open_progress(home)
        try:
            progress.record(verdict)
        finally:
            progress.close()
    except ProgressError as err:
        print(f"kata: {err}", file=sys.stderr)


def _run_check(kata, ws: Path, lang: str, options: list[str], home: Path) -> tuple[Verdict, bool]:
    """kata's file in ws checked as `kata check NAME --workspace ws --json` checks it: by home's resident checker
    when one answers (True: nothing recorded yet), else by the real command in a fresh process, after which
    home's checker is started for the next check (False: the command recorded it in ws)."""
    from checker.warm import client

    args = cell_options(" ".join([kata.id, *map(shlex.quote, options)]))  # None: the command says what is wrong
    session = client.connect(home) if client.wanted() and args is not None else None
    if session is not None:
        from checker.app import cli, report

        with session:
            results = list(session.check([(kata.id, kata_file(ws, kata))], cli.check_options(args), lang))
        if results:  # the document --json prints, read back as the command's is
            with speaking(lang):
                doc = json.loads(json.dumps(report.as_json(results[0]), ensure_ascii=False))
            return Verdict.from_json(doc, lang), True
    proc = _kata(["check", kata.id, "--workspace", str(ws), "--json", "--lang", lang, "--no-server", *options])
    if client.wanted():
        client.start(home)
    try:
        doc = json.loads(proc.stdout)
    except json.JSONDecodeError:
        raise RuntimeError(t("kata check gave no verdict (exit {code}): {error}", code=proc.returncode,
                             error=proc.stderr.strip() or proc.stdout.strip())) from None
    return Verdict.from_json(doc["katas"][0], lang), False


def _kata(args: list[str]) -> subprocess.CompletedProcess:
    """The real command in a fresh process: nothing of the caller's (threads, prints) is shared."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "100", "PYTHONIOENCODING": "utf-8"}
    return subprocess.run([sys.executable, "-m", "checker", *args], capture_output=True, text=True, check=False,
                          encoding="utf-8", errors="replace", env=env, stdin=subprocess.DEVNULL)


# ----------------------------------------------------------------------------- the code checked


@dataclass
class Piece:
    """One top-level statement of the code checked, and where it was written."""

    text: str
    where: str | None  # the cell ("practice.ipynb · In[4]") or the file; None: written here (an import, an alias)
    line: int  # its first line there
    order: tuple  # the order it ran in: (0,) written here, (1, cell, file, line) yours, (2, n) the contract's names


class Code:
    """The file the checker gets, and where each of its lines came from (to name the cell, not the copy)."""

    def __init__(self, pieces, label: str, future: tuple[str, ...] = ()):
        self.label = label  # what the report shows as the file
        lines, self.places = list(future), [None] * len(future)
        for piece in sorted(pieces, key=lambda p: p.order):
            if lines:
                lines.append("")
                self.places.append(None)
            for k, text in enumerate(piece.text.splitlines()):
                lines.append(text)
                self.places.append((piece.where, piece.line + k) if piece.where else None)
        self.text = "\n".join(lines) + "\n"

    @classmethod
    def of_text(cls, source: str) -> Code:
        code = cls([], "<source>")
        code.text, code.places = source, [("<source>", n) for n in range(1, source.count("\n") + 2)]
        return code

    def place(self, line: int | None) -> tuple[str, int] | None:
        return self.places[line - 1] if line and 0 < line <= len(self.places) else None

    def relabel(self, verdict: Verdict, copy: str) -> None:
        """The verdict in terms of the cells and files the code came from: its file, the lines its checks
        point at (in the cell shown, or said with their cell), the frames of its traceback."""
        with speaking(verdict.lang):
            before, _, after = str(t("line {line}")).partition("{line}")
            pattern = re.compile(("(?<!\\w)" if before[:1].isalnum() else "") + re.escape(before) + r"(\d+)"
                                 + re.escape(after))

            def lines(text):
                def one(match):
                    place = self.place(int(match[1]))
                    if place is None:
                        return match[0]
                    if place[0] == self.label:
                        return str(t("line {line}", line=place[1]))
                    return str(t("line {line} of {where}", line=place[1], where=place[0]))

                return pattern.sub(one, text) if text else text

            def frame(match):
                place = self.place(int(match[1]))
                return f'File "{place[0]}", line {place[1]}' if place else f'File "<kata>", line {match[1]}'

            verdict.file = self.label
            error = re.sub(rf'File "{re.escape(copy)}", line (\d+)', frame, verdict.error or "")
            verdict.error = error.replace(copy, self.label)
            verdict.diagnosis = lines(verdict.diagnosis)
            for c in verdict.checks:
                place = self.place(c.line)
                shown = place is not None and place[0] == self.label
                c.line, c.column = (place[1], c.column) if shown else (None, None)
                c.message, c.diagnosis = lines(c.message), lines(c.diagnosis)


def gather(kata, obj) -> Code:
    """The code of obj (a class or a function; a list or a dict of them for a kata of several names), placed
    under the kata's names, with everything it reads at module level."""
    wanted = _placed(kata, obj)
    found = _Gatherer()
    label = None
    for n, (target, thing) in enumerate(wanted.items()):
        piece, defined = found.definition(thing)
        label = label or piece.where
        if defined != target:
            found.add(Piece(f"{target} = {defined}", None, 0, (2, n)))
    space = _namespace(next(iter(wanted.values())))
    for target in kata.targets:
        if target not in wanted:
            found.need(target, space)  # the rest of the contract, as a file of yours would have it
    return Code(found.pieces.values(), label, tuple(sorted(found.future)))


def _placed(kata, obj) -> dict:
    """{the kata's name: your object}."""
    targets = kata.targets
    if isinstance(obj, dict):
        unknown = [n for n in obj if n not in targets]
        if unknown:
            raise ValueError(t("{kata} asks for {targets}, not {name}", kata=kata.id, targets=", ".join(targets),
                               name=unknown[0]))
        return dict(obj)
    things = list(obj) if isinstance(obj, (list, tuple)) else [obj]
    if len(targets) == 1 and len(things) == 1:
        return {targets[0]: things[0]}
    placed = {}
    for thing in things:
        name = getattr(thing, "__name__", repr(thing))
        if name not in targets:
            raise ValueError(t("{kata} asks for {targets}: say which one {name} is, e.g. check(\"{kata}\", "
                               "{{\"{first}\": {name}}})", kata=kata.id, targets=", ".join(targets), name=name,
                               first=targets[0]))
        placed[name] = thing
    return placed


class _Gatherer:
    """Collects the pieces: each definition by the text that made it, each name it reads by the statement that
    last bound it (newest cell first), each once."""

    def __init__(self):
        self.pieces: dict[tuple, Piece] = {}
        self.future: set[str] = set()
        self.needed: set[tuple] = set()

    def add(self, piece: Piece) -> bool:
        key = (piece.where, piece.line, piece.text)  # an import statement gives a piece per name needed
        if key in self.pieces:
            return False
        self.pieces[key] = piece
        return True

    def definition(self, thing) -> tuple[Piece, str]:
        """The piece that defines thing, and the name it defines it under."""
        space = _namespace(thing)
        found = _definition(thing, _history(space))
        if found is None:
            raise ValueError(t("cannot find the code of {obj}: pass it as text, check(NAME, source=...)",
                               obj=getattr(thing, "__qualname__", repr(thing))))
        where, number, text, node = found
        piece = _piece(where, number, text, node)
        if self.add(piece):
            self.future |= _futures(number, text)
            self.reads(piece, space)
        return piece, node.name

    def need(self, name: str, space: dict) -> None:
        """The module-level name `name` of space: a definition of yours, the statement that bound it, or an
        import or a literal written here; a name space does not hold (a builtin) is left to Python."""
        if (id(space), name) in self.needed or name not in space:
            return
        self.needed.add((id(space), name))
        value = space[name]
        if _own(value, space):
            piece, defined = self.definition(value)
            if defined != name:
                self.add(Piece(f"{name} = {defined}", piece.where, piece.line, piece.order + (1,)))
            return
        for where, number, text in _history(space):
            node = _bound(text, name)
            if node is not None:
                piece = _piece(where, number, text, node, name)
                if self.add(piece):
                    self.future |= _futures(number, text)
                    self.reads(piece, space)
                return
        written = _written(name, value)
        if written is None:
            raise ValueError(t("cannot find the statement that defines {name}, which your code reads: run the cell "
                               "that defines it, or pass the code as text, check(NAME, source=...)", name=name))
        self.add(Piece(written, None, 0, (0,)))

    def reads(self, piece: Piece, space: dict) -> None:
        for name in sorted(_globals_read(piece.text)):
            self.need(name, space)


def _piece(where: str, number: int, text: str, node: ast.stmt, name: str | None = None) -> Piece:
    """A top-level statement as its lines; an import reduced to the name it is needed for."""
    first = min([node.lineno] + [d.lineno for d in getattr(node, "decorator_list", ())])
    if isinstance(node, (ast.Import, ast.ImportFrom)) and name is not None:
        node = type(node)(**{**node.__dict__, "names": [a for a in node.names if _alias_binds(a, name)]})
        body = ast.unparse(node)
    else:
        body = "\n".join(text.splitlines()[first - 1:node.end_lineno])
    return Piece(body, where, first, (1, number, "" if number else where, first))  # number: a cell's, 0 a file


def _definition(thing, history) -> tuple | None:
    """(where, number, text, node) of the def or class statement that made thing."""
    function = inspect.unwrap(thing) if callable(thing) else thing
    if inspect.isfunction(function):
        codes, name, kinds = [function.__code__], function.__name__, (ast.FunctionDef, ast.AsyncFunctionDef)
    elif inspect.isclass(thing):
        codes, name, kinds = [m.__code__ for m in _methods(thing)], thing.__name__, (ast.ClassDef,)
    else:
        raise TypeError(t("check() takes a class or a function (a list or a dict of them for a kata of several "
                          "names), not {obj}", obj=repr(thing)[:80]))
    for code in codes:
        text = "".join(linecache.getlines(code.co_filename))
        for node in _tree(text):
            if isinstance(node, kinds) and node.name == name and (
                    min([node.lineno] + [d.lineno for d in node.decorator_list]) == code.co_firstlineno
                    if kinds[0] is not ast.ClassDef else node.lineno <= code.co_firstlineno <= node.end_lineno):
                return (*_origin(code.co_filename), text, node)
    for where, number, text in history if not codes else ():  # a class with no method of its own: its
        node = _bound(text, name)  # last class statement
        if isinstance(node, kinds):
            return where, number, text, node
    return None


def _methods(cls) -> list:
    """The functions written in cls's own body: their code knows the cell or file cls is in, their globals
    the names it reads."""
    found = []
    for value in vars(cls).values():
        parts = ([value.fget, value.fset, value.fdel] if isinstance(value, property)
                 else [getattr(value, "__func__", value)])  # a staticmethod's, a classmethod's function
        for part in parts:
            part = inspect.unwrap(part) if callable(part) else part
            if inspect.isfunction(part) and part.__qualname__.startswith(cls.__qualname__ + "."):
                found.append(part)
    return found


def _namespace(thing) -> dict:
    """The module-level names thing's code reads: a function's globals, a class's module (the notebook's)."""
    function = inspect.unwrap(thing) if callable(thing) else thing
    if inspect.isfunction(function):
        return function.__globals__
    methods = _methods(thing) if inspect.isclass(thing) else []
    if methods:
        return methods[0].__globals__
    module = sys.modules.get(getattr(thing, "__module__", None) or "")
    return vars(module) if module is not None else {}


def _own(value, space: dict) -> bool:
    """A function or class written in space's own code (your notebook, your file), not imported into it."""
    function = inspect.unwrap(value) if callable(value) and not inspect.isclass(value) else value
    if inspect.isfunction(function):
        return function.__globals__ is space and function.__name__ != "<lambda>"
    if inspect.isclass(value):
        module = sys.modules.get(value.__module__)
        return module is not None and vars(module) is space
    return False


def _shell():
    ipython = sys.modules.get("IPython")  # never imported here: a caller without IPython has no cells
    return ipython.get_ipython() if ipython is not None and hasattr(ipython, "get_ipython") else None


def _origin(filename: str) -> tuple[str, int]:
    """The cell (its label and number) a code object's file is, or the file itself."""
    shell = _shell()
    number = getattr(getattr(shell, "compile", None), "_filename_map", {}).get(filename)
    if number is None and shell is not None:
        text = "".join(linecache.getlines(filename))
        cells = list(shell.user_ns.get("In", ()))
        number = next((n for n in range(len(cells) - 1, 0, -1) if cells[n].rstrip() == text.rstrip()), None)
    return (_cell(number), number) if number is not None else (filename, 0)


def _cell(number: int) -> str:
    """A cell as IPython names it in tracebacks (In[4]), after its notebook's name where the kernel knows it."""
    shell = _shell()
    space = shell.user_ns if shell is not None else {}
    notebook = space.get("__vsc_ipynb_file__") or space.get("__session__") or ""
    return f"{Path(notebook).name} · In[{number}]" if str(notebook).endswith(".ipynb") else f"In[{number}]"


def _history(space: dict) -> list[tuple[str, int, str]]:
    """(where, number, text) of the code that ran in space, newest first: the cells, or the module's file."""
    shell = _shell()
    if shell is not None and space is shell.user_ns:
        cells = list(space.get("In", ()))
        return [(_cell(n), n, cells[n]) for n in range(len(cells) - 1, 0, -1)]
    file = space.get("__file__")
    if file and Path(file).is_file():
        return [(str(file), 0, "".join(linecache.getlines(str(file))))]
    return []


@functools.lru_cache(maxsize=256)
def _tree(text: str) -> tuple:
    """The top-level statements of a cell or a file (a cell may await at its top level: IPython runs it)."""
    try:
        return tuple(compile(text, "<cell>", "exec", ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT).body)
    except (SyntaxError, ValueError):
        return ()


def _bound(text: str, name: str) -> ast.stmt | None:
    """The last top-level statement of text that binds name: a def, a class, an import, an assignment, or an
    if, with or try block holding one (`if cuda: DEVICE = ... else: DEVICE = ...`); never a loop."""
    for node in reversed(_tree(text)):
        if _binds(node, name):
            return node
    return None


def _binds(node: ast.stmt, name: str) -> bool:
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return getattr(node, "module", "") != "__future__" and any(_alias_binds(a, name) for a in node.names)
    if isinstance(node, (ast.If, ast.With, ast.Try, getattr(ast, "TryStar", ast.Try))):
        inner = [s for part in ("body", "orelse", "finalbody") for s in getattr(node, part, ())]
        inner += [s for handler in getattr(node, "handlers", ()) for s in handler.body]
        held = [item.optional_vars for item in getattr(node, "items", ()) if item.optional_vars is not None]
        return any(_binds(s, name) for s in inner) or any(
            isinstance(n, ast.Name) and n.id == name for target in held for n in ast.walk(target))
    targets = node.targets if isinstance(node, ast.Assign) else [node.target] if (
        isinstance(node, ast.AnnAssign) and node.value is not None) else []
    return any(isinstance(n, ast.Name) and n.id == name for target in targets for n in ast.walk(target))


def _alias_binds(alias: ast.alias, name: str) -> bool:
    return (alias.asname or alias.name.split(".")[0]) == name


def _futures(number: int, text: str) -> set[str]:
    """The `from __future__` imports the code was compiled under (a cell's hold for the cells after it)."""
    shell = _shell()
    if shell is not None and number:
        import __future__

        held = shell.compile.flags & __future__.annotations.compiler_flag
        return {"from __future__ import annotations"} if held else set()
    return {ast.unparse(n) for n in _tree(text) if isinstance(n, ast.ImportFrom) and n.module == "__future__"}


def _globals_read(text: str) -> set[str]:
    """The module-level names a statement reads: in its own top level, and as globals of its functions and
    class bodies (a name a nested function takes from the function around it is not one)."""
    try:
        top = symtable.symtable(text, "<kata>", "exec")
    except SyntaxError:
        return set()
    names, tables = set(), [top]
    while tables:
        table = tables.pop()
        module = table.get_type() == "module"
        names |= {s.get_name() for s in table.get_symbols() if s.is_referenced() and (module or s.is_global())}
        tables += table.get_children()
    return names


def _written(name: str, value) -> str | None:
    """A statement that binds name to value, for a value no statement of yours binds: a module, something
    importable by its own name, or a literal."""
    if inspect.ismodule(value):
        module = value.__name__
        return f"import {module}" if module == name else f"import {module} as {name}"
    module, qualname = getattr(value, "__module__", None), getattr(value, "__qualname__", "")
    importable = module and module != "__main__" and qualname.isidentifier()
    if importable and getattr(sys.modules.get(module), qualname, None) is value:
        return f"from {module} import {qualname}" + (f" as {name}" if qualname != name else "")
    if isinstance(value, float) and not math.isfinite(value):
        return f"{name} = float({str(value)!r})"
    try:
        if ast.literal_eval(repr(value)) == value:
            return f"{name} = {value!r}"
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        pass
    return None


# ----------------------------------------------------------------------------- the IPython extension


def save_cell(name: str, code: str, workspace: str | None = None) -> Path:
    """Write a cell into the workspace as kata NAME's file; a different version there is kept as a backup."""
    kata = catalogue.find(name)
    ws = locate(workspace, announce=lambda message: None)
    path = kata_file(ws, kata)
    if path.is_file() and path.read_text(encoding="utf-8") != code:
        from checker.app.practice import fresh_folder  # the folder `kata reset` keeps its backups in, never reused

        backup = kata_file(fresh_folder(ws / "backups"), kata)
        backup.parent.mkdir(parents=True, exist_ok=True)
        backup.write_text(path.read_text(encoding="utf-8"), encoding="utf-8")
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(code, encoding="utf-8")
    return path


def cell_options(line: str):
    """%%kata's line read by `kata check`'s own parser: the same options, the same values (--lang=zh as
    --lang zh), the same errors. None when the parser has said why it refused (or printed --help)."""
    import argparse

    from checker.app.cli import _argparse_speaking, build_parser

    words = shlex.split(line)
    with speaking(chosen_language(words)), _argparse_speaking():
        parser = build_parser()
        try:
            args, extra = parser.parse_known_args(["check", *words])
            if extra:  # said by `kata check`'s parser, as the command says it
                commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
                commands["check"].error(t("unrecognized arguments: %s") % " ".join(extra))
        except SystemExit:
            return None
    return args


def run_cell(line: str, cell: str, show) -> None:
    """%%kata NAME [options]: the cell becomes kata NAME's file in the workspace, checked as `kata check` would."""
    from checker.app import report
    from checker.catalogue import UnknownKata
    from checker.errors import UsageError

    args = cell_options(line)
    if args is None:
        return
    lang = language(args.lang)
    if len(args.names) != 1 or args.all or args.solution:
        print(t("%%kata needs the kata's name, e.g. %%kata attention") if len(args.names) != 1 else
              t("%%kata checks the cell as one kata's file: --all and --solution are for `kata check` in a shell"),
              file=sys.stderr)
        return
    try:
        kata = catalogue.find(args.names[0])
        path = save_cell(kata.id, cell, args.workspace)
    except (UnknownKata, WorkspaceError, UsageError) as err:
        print(f"kata: {err}", file=sys.stderr)
        return
    ws = path.parents[1]  # WORKSPACE/TRACK/NAME.py
    common = ["--workspace", str(ws), "--lang", lang]
    if args.case is not None:  # the Python that rebuilds case N, to paste into a cell
        proc = _kata(["check", kata.id, *common, "--case", str(args.case)])
        print(proc.stdout.rstrip("\n"))
        if proc.stderr.strip():
            print(proc.stderr.rstrip("\n"), file=sys.stderr)
        return
    options = ["--timeout", str(args.timeout), "--memory", str(args.memory)]
    options += ["--strict"] * args.strict + ["--show-weights"] * args.show_weights
    verdict, warm = _run_check(kata, ws, lang, options, ws)
    if warm:  # the command records its own checks; the server's, its client does
        _record(verdict, ws)
    verdict.verbose = args.verbose
    with speaking(lang):
        if args.json or args.format == "json":
            print(json.dumps({"katas": [report.as_json(verdict)]}, ensure_ascii=False, indent=2))
        elif args.format == "problems":
            print("\n".join(report.problems([verdict])))
        else:
            show(verdict)


def load_ipython_extension(ipython) -> None:
    """%load_ext checker: %%kata NAME [options of kata check] checks the cell; %kata hint|show|list|stats|quiz ..."""
    from IPython.core.magic import Magics, line_cell_magic, magics_class
    from IPython.display import display

    @magics_class
    class KataMagics(Magics):
        @line_cell_magic
        def kata(self, line: str, cell: str | None = None):
            if cell is not None:
                run_cell(line, cell, display)
                return
            words = shlex.split(line)  # %kata hint attention, %kata show attention --lang zh, ...
            if words[:1] == ["quiz"] and not {"--answer", "--json", "--list", "-h", "--help"} & set(words):
                words.append("--print")  # a kernel has no terminal to answer in: %kata quiz --answer ID@SEED X
            proc = _kata(words)
            print(proc.stdout.rstrip("\n"), file=sys.stdout)
            if proc.stderr.strip():
                print(proc.stderr.rstrip("\n"), file=sys.stderr)

    ipython.register_magics(KataMagics)
