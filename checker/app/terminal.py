"""What every command shares on the terminal: notes on stderr, JSON on stdout, yes/no questions, Chinese wrapping.

Never imports torch.
"""

from __future__ import annotations

import functools
import json
import re
import sys
import unicodedata
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.segment import Segment
from rich.text import Text

from checker.errors import UsageError
from checker.lang import Message, tr


def warn(console: Console, message: str, style: str = "yellow") -> None:
    """Notes go to stderr, so that --json output stays one clean document on stdout."""
    Console(stderr=True, no_color=console.no_color, highlight=False).print(Wrapped(message, style=style))


class KataConsole(Console):
    """rich's Console, except when the reader has gone (`kata list | head -1`): rich would end the process
    with status 1; the command decides instead (a verdict keeps its own status)."""

    def on_broken_pipe(self) -> None:
        raise BrokenPipeError


def safe_streams() -> None:
    """A console or pipe that cannot encode a character (GBK, cp1252, ASCII) gets a replacement, not a traceback;
    a closed stdout or stderr (`kata list >&-`) becomes the null device."""
    import os

    if sys.stdout is None:
        sys.stdout = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):  # replaced, closed, or not a text stream
            pass


# A report's marks, each the first of its candidates the console can encode: passed and failed lines stay
# distinct on a GBK console (√ ×), a cp1252 one and plain ASCII. "?" (accepted, with a question) is ASCII.
_MARKS = {"pass": ("✓", "√", "ok"), "fail": ("✗", "×", "x"), "skipped": ("·", "-"), "next": ("▸", "→", ">"),
          "shades": ("░▒▓█", ".-=#")}


def marks(stream=None) -> dict[str, str]:
    """The marks for the stream the report goes to (stdout by default)."""
    encoding = getattr(stream or sys.stdout, "encoding", None) or "utf-8"
    return _marks(encoding)


@functools.lru_cache(maxsize=None)
def _marks(encoding: str) -> dict[str, str]:
    def fits(text: str) -> bool:
        try:
            text.encode(encoding)
        except (UnicodeError, LookupError):
            return False
        return True

    return {name: next((c for c in candidates if fits(c)), candidates[-1]) for name, candidates in _MARKS.items()}


def _utf(stream) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "").startswith("utf")


def print_json(document) -> None:
    """One JSON document on stdout: characters the stream cannot encode are escaped (\\uXXXX), never lost. A
    message in it (checker.lang.Message) is drawn here, in the language spoken."""
    sys.stdout.write(json.dumps(document, ensure_ascii=not _utf(sys.stdout), indent=2, default=_drawn) + "\n")


def _drawn(value) -> str:
    if isinstance(value, Message):
        return str(value)
    raise TypeError(f"{type(value).__name__} is no JSON")


def confirm(console: Console, question: str, *, yes: bool, refusal: str) -> bool:
    """--yes answers yes; with no terminal to ask on, refuse (a UsageError saying to pass --yes)."""
    if yes:
        return True
    if not sys.stdin.isatty():
        raise UsageError(refusal)
    asking = Console(stderr=True, no_color=console.no_color, highlight=False)  # stdout stays for results
    try:
        answer = asking.input(Text(f"{question} [y/N] ", style="bold"))
    except EOFError:
        return False
    return answer.strip().lower() in ("y", "yes", "是", "好")


# ----------------------------------------------------------------------------- wrapping Chinese as well as English

# A line may not start with closing punctuation nor end with opening punctuation (the rule of 禁则).
_OPENING = "([{（【「『《〈“‘"
_CLOSING = ")]},.;:!?%）】」』》〉”’，。、；：！？…"


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in "WF"


NO_BREAK = "\u00a0"  # a space where wrap may not break the line: it draws a plain space

# What wrap keeps on one line, as a word: a `code` span written with its backticks, and a command
# (kata, its subcommand, a name and options: kata check attention, kata drill --list).
_COMMANDS = "init|list|show|check|watch|drill|hint|solution|reset|stats|next|quiz|completion"
_UNBROKEN = re.compile(r"`[^`\n]+`|\bkata (?:" + _COMMANDS + r")\b(?: [\w./{}]+(?<![.]))?(?: --?\w[\w-]*)*",
                       re.ASCII)  # \w: ASCII only, so that a Chinese word after a command is no name


def unbroken(plain: str) -> list[tuple[int, int]]:
    """The (start, end) of each stretch wrap keeps on one line: a `code` span, a command."""
    return [match.span() for match in _UNBROKEN.finditer(plain)]


def code_span(code: str) -> str:
    """Inline code whose backticks are drawn away (a statement's `code`): its spaces become NO_BREAK,
    so that wrap moves it to the next line whole."""
    return code.replace(" ", NO_BREAK)


def _may_break_before(plain: str, i: int) -> bool:
    """A line may start at plain[i]: after a space, or beside a Chinese character (which needs no space)."""
    before, here = plain[i - 1], plain[i]
    if here.isspace() or before == NO_BREAK:
        return False
    if before.isspace():
        return True
    return (_wide(before) or _wide(here)) and here not in _CLOSING and before not in _OPENING


def _may_break_beside_punctuation(plain: str, i: int) -> bool:
    """_may_break_before without the rule of 禁则: after an opening bracket, before a closing one."""
    before, here = plain[i - 1], plain[i]
    return not here.isspace() and before != NO_BREAK and (before.isspace() or _wide(before) or _wide(here))


def wrap(text: Text, width: int) -> list[Text]:
    """text cut into lines of at most width cells, styles kept.

    rich breaks only at spaces, so a run of Chinese (which has none) moves whole to the next line and
    leaves the line before half empty; here a line may also break between two Chinese characters.
    Code is never broken: a `code` span, a command (kata check attention) or words joined by NO_BREAK
    spaces that do not fit move whole to the next line; only one longer than the whole line is folded,
    as is any word longer than a line.
    """
    lines = []
    for para in text.split("\n", allow_blank=True):
        plain, cuts = para.plain, []
        inside = [False] * (len(plain) + 1)  # inside[j]: a break before plain[j] would split a code span
        for a, b in unbroken(plain):
            inside[a + 1:b] = [True] * (b - a - 1)
        start = cells = 0
        for i, ch in enumerate(plain):
            width_of = 1 if " " <= ch <= "~" else cell_len(ch)
            if cells + width_of > width and not ch.isspace() and i > start:
                # the latest place since start where the line may break; else, rather than cut a code span,
                # beside a bracket that holds it, against the rule of 禁则; else fold a word longer than the line
                start = next((j for j in range(i, start, -1) if not inside[j] and _may_break_before(plain, j)),
                             None) or next((j for j in range(i, start, -1) if not inside[j]
                                            and _may_break_beside_punctuation(plain, j)), i)
                cuts.append(start)
                cells = cell_len(plain[start:i])
            cells += width_of
        for line in para.divide(cuts):
            line.rstrip()
            line.plain = line.plain.replace(NO_BREAK, " ")  # same length: the styles stay where they were
            lines.append(line)
    return lines


class Wrapped:
    """A Text that wraps as Chinese should (see wrap) at whatever width it is given."""

    def __init__(self, text: Text | str | Message, style: str = ""):
        self.text = text if isinstance(text, Text) else Text(str(text), style=style)

    def __rich_console__(self, console, options):
        lines = wrap(self.text, options.max_width)
        joined = Text("\n").join(lines)
        joined.no_wrap, joined.overflow = True, "crop"
        yield joined

    def __rich_measure__(self, console, options) -> Measurement:
        longest = max(cell_len(line) for line in self.text.plain.split("\n"))
        return Measurement(min(longest, 8), longest)



class Hanging:
    """A list item: its marker ("• ", "2. "), then its text wrapped as Wrapped does, the later lines
    indented under the text (what a two-column grid draws, at a fraction of its cost)."""

    def __init__(self, marker: str, text: Text):
        self.marker, self.text = marker, text

    def __rich_console__(self, console, options):
        pad = cell_len(self.marker)
        out = Text()
        for i, line in enumerate(wrap(self.text, max(1, options.max_width - pad))):
            out.append("\n" if i else "")
            out.append(" " * pad if i else self.marker)
            out.append_text(line)
        out.no_wrap, out.overflow = True, "crop"
        yield out

    def __rich_measure__(self, console, options) -> Measurement:
        inner = Wrapped(self.text).__rich_measure__(console, options)
        pad = cell_len(self.marker)
        return Measurement(inner.minimum + pad, inner.maximum + pad)


class Code:
    """A code block: its lines as written, indented, never wrapped. A line longer than the width runs past it
    (the terminal shows the rest on its next row; copied, it is still one line) when printed with crop=False;
    re-flowing it at the width would split an expression."""

    def __init__(self, code: str, indent: int = 4, style: str = "cyan"):
        self.lines, self.indent, self.style = code.split("\n"), indent, style

    def __rich_console__(self, console, options):
        for line in self.lines:
            yield Text(" " * self.indent + line if line.strip() else "", style=self.style, no_wrap=True,
                       overflow="ignore", end="")
            yield Segment.line()

    def __rich_measure__(self, console, options) -> Measurement:
        longest = self.indent + max(cell_len(line) for line in self.lines)
        return Measurement(longest, longest)


# ----------------------------------------------------------------------------- a kata's status, a duration

STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "not_started": "bold yellow",
                "error": "bold red", "timeout": "bold magenta"}
STATUS_LABEL = {"pass": "PASS", "fail": "FAIL", "not_started": "NOT STARTED", "error": "ERROR", "timeout": "TIMEOUT"}


def status_text(status: str) -> Text:
    return Text(tr(STATUS_LABEL.get(status, status)), style=STATUS_STYLE.get(status, ""))


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def open_workspace(args, console, near: tuple[Path, ...] = ()) -> Path:
    """The workspace a command works in (--workspace, KATA_WORKSPACE, the one holding a file named, the current
    folder, the default); where it was found is said on stderr, so that --json stays one document."""
    from checker.state.workspace import locate

    return locate(args.workspace, announce=lambda msg: warn(console, msg, style="cyan"), near=near)
