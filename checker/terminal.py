"""What every command shares on the terminal: notes on stderr, JSON on stdout, yes/no questions, Chinese wrapping.

Never imports torch.
"""

from __future__ import annotations

import functools
import json
import sys
import unicodedata

from rich.cells import cell_len
from rich.console import Console
from rich.measure import Measurement
from rich.text import Text

from checker.errors import UsageError
from checker.lang import t


def warn(console: Console, message: str, style: str = "yellow") -> None:
    """Notes go to stderr, so that --json output stays one clean document on stdout."""
    Console(stderr=True, no_color=console.no_color, highlight=False).print(Text(message, style=style))


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
    """One JSON document on stdout: characters the stream cannot encode are escaped (\\uXXXX), never lost."""
    sys.stdout.write(json.dumps(document, ensure_ascii=not _utf(sys.stdout), indent=2) + "\n")


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


def _may_break_before(plain: str, i: int) -> bool:
    """A line may start at plain[i]: after a space, or beside a Chinese character (which needs no space)."""
    before, here = plain[i - 1], plain[i]
    if here.isspace() or before == NO_BREAK:
        return False
    if before.isspace():
        return True
    return (_wide(before) or _wide(here)) and here not in _CLOSING and before not in _OPENING


def wrap(text: Text, width: int) -> list[Text]:
    """text cut into lines of at most width cells, styles kept.

    rich breaks only at spaces, so a run of Chinese (which has none) moves whole to the next line and
    leaves the line before half empty; here a line may also break between two Chinese characters.
    A word longer than a line is folded. NO_BREAK spaces keep their neighbours on one line.
    """
    lines = []
    for para in text.split("\n", allow_blank=True):
        plain, cuts = para.plain, []
        start = cells = 0
        for i, ch in enumerate(plain):
            width_of = 1 if " " <= ch <= "~" else cell_len(ch)
            if cells + width_of > width and not ch.isspace() and i > start:
                # the latest place since start where the line may break, else fold a word longer than the line
                start = next((j for j in range(i, start, -1) if _may_break_before(plain, j)), i)
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

    def __init__(self, text: Text | str, style: str = ""):
        self.text = Text(text, style=style) if isinstance(text, str) else text

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

# ----------------------------------------------------------------------------- a kata's status, a duration

STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "not_started": "bold yellow",
                "error": "bold red", "timeout": "bold magenta"}
STATUS_LABEL = {"pass": "PASS", "fail": "FAIL", "not_started": "NOT STARTED", "error": "ERROR", "timeout": "TIMEOUT"}


def status_text(status: str) -> Text:
    return Text(t(STATUS_LABEL.get(status, status)), style=STATUS_STYLE.get(status, ""))


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"
