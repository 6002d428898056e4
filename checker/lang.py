"""The language of kata's own sentences: --lang, else the locale. English and Chinese.

One lookup, two ways in:
- t(english, **values): a sentence written in English where it is used (check titles, failures,
  diagnoses, errors), said in the language being spoken (speaking(lang)); gettext's msgid style;
- say(lang, key, **values): a screen's sentence by its key; STRINGS below holds its English.
The Chinese is data, not code: checker/zh.toml for the core and checker/checks/TRACK_NAME/zh.toml for
each kata (its checks' sentences and its reference's steps), English template = Chinese template. The
core's is read when Chinese is first spoken, a kata's before its checks run (read_catalogue).
Placeholders are named ({d_k}, never positional) and the same on both sides; tests/commands/test_messages.py
extracts every sentence the code writes and holds it to that.
A sentence with no Chinese yet falls back to English. Statements and hints have their own files per
language (checker/checks/TRACK_NAME/statement[.zh].md).
"""

from __future__ import annotations

import contextvars
import os
import re
import sys
from contextlib import contextmanager
from pathlib import Path

LANGUAGES = ("en", "zh")

STRINGS: dict[str, str] = {
    # kata show
    "show.forbidden": "Off limits in this kata: {names}.",
    "show.hints": "Hints: `kata hint {kata}` gives them one level at a time (concept, then shapes and steps, then "
                  "near-code); `kata show {kata} --hints` shows again the levels you have taken.",
    "show.hints_taken": "Hints you have taken ({taken} of {total}):",
    "show.no_hints_taken": "You have taken no hint for {kata} yet: `kata hint {kata}` gives the first.",
    "show.file": "Your file: {file} in your workspace.  Check it with `kata check {kata}`.",
    # kata hint
    "hint.level": "Hint {level} of {total} ({name})",
    "hint.names": "concept|shapes and steps|near-code",
    "hint.more": "Run `kata hint {kata}` again for the next level.",
    "hint.last": "That was the last hint. Still stuck? `kata solution {kata}` shows the reference.",
    "hint.none": "{kata} has no hints yet.",
    "locked": "A drill is running until {until}: hints and solutions are locked "
              "(start a drill with --allow-hints to allow them).",
    # kata solution
    "solution.ask": "You have not passed {kata} yet. Show the reference answer anyway?",
    "solution.needs_yes": "you have not passed {kata} yet; pass --yes to see the reference answer anyway",
    "solution.title": "Reference answer: {kata}",
    "solution.why": "Why it is written this way",
    "solution.pitfalls": "Pitfalls it avoids",
    "not_shown": "Nothing shown, nothing changed.",
    # kata reset
    "reset.ask": "Replace {count} file(s) with the blank stub? Each current version is kept as a dated backup.",
    "reset.needs_yes": "reset replaces your file(s); pass --yes to do it without being asked",
    "reset.done": "{kata}: blank stub restored; your version is kept in {backup}",
    "reset.restored": "{kata}: blank stub restored",
    "reset.blank": "{kata}: already the blank stub, left as it is",
    # kata stats
    "stats.none": "No history yet: check a kata (`kata check NAME`) or start a drill (`kata drill --list`).",
    "stats.untouched": "{count} kata(s) not tried yet; `kata next` suggests one.",
    # kata next
    "next.title": "What to practise now",
    "next.new": "new: next on the learning path",
    "next.hard": "review: hard last time ({why}), {ago}",
    "next.due": "review: passed {ago}, due again",
    "next.later": "review early: next due in {days} day(s)",
    "next.quiz_title": "the oral round: interview questions",
    "next.quiz_wrong": "{count} question(s) you answered wrong, due again",
    "next.quiz_due": "{count} question(s) you answered right, due for review",
    "next.quiz_new": "{count} question(s) on katas you have passed, not asked yet",
    "next.done": "Everything is passed and nothing is due; a drill keeps it fresh: `kata drill --list`.",
    "ago.today": "today",
    "ago.days": "{days} day(s) ago",
    "why.solution": "you looked at the solution",
    "why.hints": "{count} hint(s)",
    "why.attempts": "{count} attempts",
    "why.not_green": "not green in a drill",
    # kata drill and kata watch
    "drill.presets": "Drill presets",
    "drill.col.preset": "preset",
    "drill.col.minutes": "minutes",
    "drill.col.what": "what",
    "drill.col.katas": "katas",
    "drill.random": "random: difficulty {levels}",
    "drill.usage": "kata drill PRESET, or kata drill KATA... [--minutes M]; --allow-hints unlocks hints.",
    "drill.files": "Drill {id}: {minutes:g} min. Your files (a fresh stub each):",
    "drill.left": "{time} left",
    "drill.report": "Drill report",
    "drill.end.time": "Time is up.",
    "drill.end.done": "All green!",
    "drill.end.quit": "Drill ended.",
    "drill.end.interrupted": "Interrupted (Ctrl-C); the report is written all the same.",
    "drill.score": "Score {score}/100",
    "drill.first": "Your first '{preset}' drill: run it again later to compare.",
    "drill.compare": "Earlier '{preset}' drills ({count}): last {last}, best {best}. Scores so far: {trend}",
    "drill.quiz": "The oral round: {count} question(s) on this drill's katas, scored apart from the code.",
    "drill.quiz_score": "Quiz: {right} of {answered} right (not part of the score above)",
    "drill.kept": "Your files stay in {folder}; `kata stats` lists every drill.",
    "watch.keys": "saving re-checks · r or Enter re-check · q quit",
    "watch.watching": "Watching {count} file(s) in {folder}",
    "watch.next": "Passed. Next: {kata} ({file})",
    "ready": "getting ready (importing torch) ...",

    # kata quiz
    "quiz.kind.choice": "choice",
    "quiz.kind.order": "order",
    "quiz.kind.numeric": "numeric",
    "quiz.prompt.choice": "Answer with the letter(s), e.g. B or A,C · ? shows the answer · q quits",
    "quiz.prompt.order": "Answer with the step numbers in order, e.g. 3 1 2 4 · ? shows the answer · q quits",
    "quiz.prompt.numeric": "Answer with a number, e.g. 1.05M or 1.05e6 · ? shows the answer · q quits",
    # kata init and kata check
    "init.ready": "Workspace ready at {path}",
    "init.copied": "{count} stub(s) copied; files you already had were left alone.",
    "init.none": "Every stub was already there; nothing was overwritten.",
    "init.next": "Next: open {file}, write the body, then run kata check attention (from inside {path}, or with "
                 "--workspace).",
    "check.progress": "checking {kata} ...",
    # kata stats: the columns
    # kata list
    "list.track": "{track} track",
    "list.track_llm": "{track} track, beyond the tutorials (modern LLMs)",
    "list.track_llm2": "{track} track, the second LLM set (fine-tuning, RLHF, serving)",
    "list.track_llm3": "{track} track, the third LLM set (RL, quantisation, serving, scaling)",
    "list.new": "new",
    # the stages of a check, as the report names them
    "stage.structure": "structure",
    "stage.shapes": "shapes",
    "stage.masking": "masking",
    "stage.numerics": "numerics",
    "stage.gradients": "gradients",
    "stage.properties": "properties",
    "stage.hygiene": "hygiene",
    # a workspace that cannot be written: read-only, or on a full disk
    "unwritable.readonly": "{folder} is read-only: `kata {command}` needs to write there. Make it writable, "
                           "or use another workspace (--workspace DIR).",
    "unwritable.full": "the disk holding {folder} is full: `kata {command}` needs to write there. "
                       "Free some space and run it again.",
    "unrecorded.readonly": "{folder} is read-only, so nothing was recorded; everything else works as usual.",
    "unrecorded.full": "the disk holding {folder} is full, so nothing was recorded; everything else works as usual.",
}


def say(lang: str, key: str, **values) -> str:
    """A screen's sentence by its key, drawn in lang."""
    return t(STRINGS[key], **values).said(lang)


def language(choice: str | None = None) -> str:
    """--lang if given, else KATA_LANG, else the locale (LC_ALL, LC_MESSAGES, LANG; on Windows, where
    these are usually unset, the system's), else English."""
    if choice:
        return choice
    chosen = os.environ.get("KATA_LANG", "").strip().lower()
    if chosen in LANGUAGES:
        return chosen
    if chosen:
        from checker.errors import UsageError

        # Said in both languages: the language is what is wrong.
        raise UsageError(f"KATA_LANG={chosen} is not a language of kata; use one of {', '.join(LANGUAGES)}\n"
                         f"KATA_LANG={chosen} 不是 kata 支持的语言，请从 {', '.join(LANGUAGES)} 中选一个")
    for var in ("LC_ALL", "LC_MESSAGES", "LANG"):
        value = os.environ.get(var, "")
        if value:
            return "zh" if value.lower().startswith("zh") else "en"
    return "zh" if _chinese(_system_locale()) else "en"


def chosen_language(argv: list[str]) -> str:
    """The language to speak before the command line is parsed (argparse's own usage and errors speak it
    too): --lang zh or --lang=zh in argv, else KATA_LANG, else the locale."""
    for i, arg in enumerate(argv):
        value = argv[i + 1] if arg == "--lang" and i + 1 < len(argv) else arg.partition("=")[2]
        if arg.startswith("--lang") and value in LANGUAGES:
            return value
    try:
        return language()
    except Exception:  # noqa: BLE001 - a bad KATA_LANG: said by the command itself
        return "en"


def _chinese(name: str) -> bool:
    """zh_CN, zh-Hans, Chinese (Simplified)_China: the names locales go by on the three systems."""
    return name.lower().startswith(("zh", "chinese"))


def _system_locale() -> str:
    """Windows: the user's locale name (e.g. zh-CN), which no environment variable holds. Elsewhere ''."""
    if sys.platform != "win32":
        return ""
    import ctypes

    name = ctypes.create_unicode_buffer(85)  # LOCALE_NAME_MAX_LENGTH
    if ctypes.windll.kernel32.GetUserDefaultLocaleName(name, len(name)):
        return name.value
    import locale

    return locale.getlocale()[0] or ""



# ----------------------------------------------------------------------------- the verdict's sentences

_speaking: contextvars.ContextVar[str] = contextvars.ContextVar("kata_language", default="en")
_HERE = Path(__file__).resolve().parent
_CORE = _HERE / "zh.toml"
_read: set[Path] = set()  # the catalogues read so far, into _table
_table: dict[str, str] = {}


def catalogues() -> list[Path]:
    """The Chinese catalogues: the core's (checker/zh.toml) and one per kata (checker/checks/TRACK_NAME/zh.toml)."""
    return [_CORE, *sorted((_HERE / "checks").glob("*/zh.toml"))]


def _read_catalogues(paths) -> None:
    for path in paths:
        if path not in _read:
            _table.update(_load(path))
            _read.add(path)


def _load(path: Path) -> dict[str, str]:
    import tomllib  # already imported by the catalogue of katas

    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


def read_catalogue(checks_module: str) -> None:
    """Before a kata's own sentences are spoken in Chinese (its checks run, its reference's steps are shown):
    its catalogue, held to its schema (every key a sentence of the kata's, unknown_keys). Parsing all 56 takes
    ~90 ms, the core's alone ~8 ms: `kata list --lang zh` reads only that."""
    if _speaking.get() == "zh":
        path = _HERE / "checks" / checks_module.split(".")[2] / "zh.toml"
        if path not in _read:
            table = _load(path)
            _refuse_unknown_keys(path, table)
            _table.update(table)
            _read.add(path)


# ----------------------------------------------------------------------------- a kata's catalogue, its schema
# A kata's zh.toml is keyed by the English of its sentences, so its schema is the set of sentences the kata
# writes: every string its folder's Python holds (checks, driver), folded where it is built from named
# constants (f"...{_FIX}", A + B, S.replace(a, b)), and its reference's numbered steps and docstrings. A key
# outside that set is a typo or a sentence since rewritten: its Chinese would never be shown. The check reads
# Python's syntax tree only (no import, no torch): ~10 ms for a kata, once per process.

def unknown_keys(path: Path, table: dict) -> list[tuple[str, list[str]]]:
    """The keys of a kata's catalogue (checker/checks/TRACK_NAME/zh.toml) that are no sentence of the kata, each
    with the sentences it may have meant (difflib)."""
    known = kata_sentences(path.parent)
    unknown = [key for key in table if key not in known]
    if not unknown:
        return []
    import difflib  # only for a catalogue in error

    return [(key, difflib.get_close_matches(key, list(known), n=2, cutoff=0.6)) for key in unknown]


def kata_sentences(folder: Path) -> set[str]:
    """Every sentence the kata of folder (checker/checks/TRACK_NAME) may say through t(), by its English."""
    track, name = folder.name.split("_", 1)
    # The reference: in the wheel's checker/_solutions or the clone's solutions/ (checker.catalogue.SOLUTIONS,
    # which this module, below the catalogue, does not import).
    solutions = _HERE / "_solutions" if (_HERE / "_solutions").is_dir() else _HERE.parent / "solutions"
    sources = [p for p in sorted(folder.glob("*.py")) if not p.name.startswith("test_")]
    sources.append(solutions / track / f"{name}.py")
    found: set[str] = set()
    for source in sources:
        if source.is_file():
            found |= _strings(source.read_text(encoding="utf-8"))
    return found


_STEP = re.compile(r"#\s*\d+\)\s*(.+)")  # a reference's numbered step, as checker.app.statement.STEP reads it


def _strings(source: str) -> set[str]:
    import ast

    tree = ast.parse(source)
    named: dict[str, str] = {}
    for node in ast.walk(tree):  # the module's named strings, in the order they are written
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            value = _folded(node.value, named)
            if value is not None:
                named[node.targets[0].id] = value
    found = {value for node in ast.walk(tree) if not isinstance(node, ast.Name)
             for value in [_folded(node, named)] if value is not None}
    found |= {doc.splitlines()[0] for node in ast.walk(tree)
              if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef))
              for doc in [ast.get_docstring(node)] if doc}
    found |= {match[1].strip() for match in _STEP.finditer(source)}
    return found


def _folded(node, named: dict[str, str]) -> str | None:
    """The string an expression always makes, where it is made of literals and named strings; else None."""
    import ast

    if isinstance(node, ast.Constant):
        return node.value if isinstance(node.value, str) else None
    if isinstance(node, ast.Name):
        return named.get(node.id)
    if isinstance(node, ast.JoinedStr):
        parts = []
        for part in node.values:
            if isinstance(part, ast.FormattedValue):
                if part.conversion != -1 or part.format_spec is not None:
                    return None
                part = part.value
            parts.append(_folded(part, named))
        return None if None in parts else "".join(parts)
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        left, right = _folded(node.left, named), _folded(node.right, named)
        return None if left is None or right is None else left + right
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "replace" \
            and len(node.args) == 2 and not node.keywords:
        text, old, new = (_folded(n, named) for n in (node.func.value, *node.args))
        return None if None in (text, old, new) else text.replace(old, new)
    return None


def _refuse_unknown_keys(path: Path, table: dict) -> None:
    unknown = unknown_keys(path, table)
    if not unknown:
        return
    from checker.errors import RegistryError

    key, close = unknown[0]
    where = "/".join(path.parts[-4:])  # checker/checks/TRACK_NAME/zh.toml
    more = len(unknown) - 1
    if close:
        message = t("{file}: the key '{key}' is no sentence of this kata (its checks, its driver or its reference's "
                    "steps), so its Chinese would never be shown. Did you mean '{close}'?",
                    file=where, key=key, close=close[0])
    else:
        message = t("{file}: the key '{key}' is no sentence of this kata (its checks, its driver or its reference's "
                    "steps), so its Chinese would never be shown.", file=where, key=key)
    if more:
        message = message + " " + t("{count} more key(s) of it are unknown too.", count=more)
    raise RegistryError(message)


def chinese() -> dict[str, str]:
    """Every Chinese template, by its English template, from every catalogue."""
    _read_every_catalogue()
    return _table


_every_catalogue_read = False


def _read_every_catalogue() -> None:
    global _every_catalogue_read
    _read_catalogues(catalogues())
    _every_catalogue_read = True


@contextmanager
def speaking(lang: str):
    """Within the block, t() speaks lang (the engine wraps a whole check run in it)."""
    token = _speaking.set(lang)
    try:
        yield
    finally:
        _speaking.reset(token)


def speak(lang: str) -> None:
    """Speak lang from now on, in this thread: a long-lived command (watch, drill) sets it once."""
    _speaking.set(lang)


def spoken() -> str:
    return _speaking.get()


# English's plural: "{count} check(s)" says "1 check", "2 checks" (up to two words may stand between the
# number and its noun: "{count} more check(s)"). Chinese has no plural form; its templates keep no "(s)".
_PLURAL = re.compile(r"\{(\w+)\}((?:\s+[\w-]+){0,2}?\s+\w+)\(s\)")


def _plural(template: str, values: dict) -> str:
    def form(match):
        number = values.get(match[1])
        if not isinstance(number, int) or isinstance(number, bool):
            return match[0]  # not a count: the "(s)" stays
        return "{" + match[1] + "}" + match[2] + ("" if number == 1 else "s")

    return _PLURAL.sub(form, template)


def _template(english: str, values: dict, lang: str) -> str:
    if lang != "zh":
        return _plural(english, values) if values and "(s)" in english else english
    if _CORE not in _read:
        _read_catalogues([_CORE])
    if english not in _table and not _every_catalogue_read:
        _read_every_catalogue()  # a kata's sentence drawn in Chinese after its checks ran in another language
    return _table.get(english, english)


class Message:
    """A sentence of kata's as data: its English template and its values (which may be messages themselves), or
    the parts it was joined from. It is drawn only where it is shown: said(lang) in a given language, str() in the
    language spoken then. So a result checked once is drawn in each reader's language, and nothing reads a drawn
    sentence back: a Message is no str, and a str method or an `in` test on one fails at once instead of freezing
    the language it happened to be made in. Joined with + or lang.joined(), messages stay messages."""

    __slots__ = ("english", "values", "parts")

    def __init__(self, english: str, values: dict, parts: tuple = ()):
        self.english, self.values, self.parts = english, values, parts

    def said(self, lang: str) -> str:
        if self.parts:
            return _said_parts(self.parts, lang)
        return _fill(self.english, {k: said(v, lang) for k, v in self.values.items()}, lang)

    def __str__(self) -> str:
        return self.said(_speaking.get())

    def __format__(self, spec: str) -> str:
        return format(str(self), spec)

    def __repr__(self) -> str:
        return f"Message({self.said('en')!r})"

    def __bool__(self) -> bool:
        return bool(self.said("en"))

    def __eq__(self, other) -> bool:
        if isinstance(other, Message):
            return self.said("en") == other.said("en")
        return str(self) == other if isinstance(other, str) else NotImplemented

    def __hash__(self) -> int:
        return hash(self.said("en"))

    def __add__(self, other):
        return Message("", {}, (self, other)) if isinstance(other, (str, Message)) else NotImplemented

    def __radd__(self, other):
        return Message("", {}, (other, self)) if isinstance(other, (str, Message)) else NotImplemented

    def join(self, items) -> Message:
        return joined(self, items)


def _fill(english: str, values: dict, lang: str) -> str:
    template = _template(english, values, lang)
    return template.format(**values) if values else template


def _said_parts(parts: tuple, lang: str) -> str:
    return "".join(said(part, lang) for part in parts)


def said(text, lang: str | None = None):
    """text in lang (default: the language spoken now): a Message (or a check's Fail, which holds some) drawn
    again, anything else as it is."""
    return text.said(lang or _speaking.get()) if hasattr(type(text), "said") else text


def reason(text):
    """What a message says apart from its values: its template and, by name, those of the messages inside it; a value
    counts by its kind (an error its .reason(), anything else its type). Two failures of one reason say one thing on
    other numbers, in either language."""
    if isinstance(text, Message):
        if text.parts:
            return tuple(reason(part) for part in text.parts)
        return (text.english, *((name, reason(value)) for name, value in text.values.items()))
    own = getattr(text, "reason", None)
    return own() if callable(own) else type(text).__name__


def values(text):
    """Every value inside a message, depth first, as (name, value): those of the messages in it too. A value that is no
    message (a dict of a module's settings, a number) holds none."""
    if not isinstance(text, Message):
        return
    for part in getattr(text, "parts", ()) or ():
        yield from values(part)
    for name, value in (getattr(text, "values", None) or {}).items():
        yield name, value
        yield from values(value)


def joined(separator: str, items) -> str:
    """separator.join(items), staying a Message when the items are."""
    items = list(items)
    parts = tuple(p for i, item in enumerate(items) for p in ((separator, item) if i else (item,)))
    lazy = any(isinstance(i, Message) for i in (separator, *items))
    return Message("", {}, parts) if lazy else separator.join(items)


def t(english: str, **values) -> Message:
    """english, or its Chinese while zh is spoken, with the named placeholders filled in (English in the
    plural form its counts call for), as a Message that can be drawn again in the other language."""
    return Message(english, values)


def tr(english: str, **values) -> str:
    """t(), drawn at once in the language spoken: the words of a screen, which is shown as soon as it is made.
    What a check says stays a Message (t) until the screen that shows it draws it."""
    return Message(english, values).said(_speaking.get())
