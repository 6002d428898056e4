"""What every command shares: exit codes, usage errors, notes on stderr, JSON on stdout, yes/no questions.

Never imports torch.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from rich.console import Console
from rich.text import Text

from checker import workspace
from checker.progress import Progress, ProgressError

EXIT_OK, EXIT_NOT_PASSED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """Bad input from the user: exit status 2 with this message."""


def warn(console: Console, message: str, style: str = "yellow") -> None:
    """Notes go to stderr, so that --json output stays one clean document on stdout."""
    Console(stderr=True, no_color=console.no_color, highlight=False).print(Text(message, style=style))


def safe_streams() -> None:
    """A console or pipe that cannot encode a character (GBK, cp1252, ASCII) gets a replacement, not a traceback."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.reconfigure(errors="replace")
        except (AttributeError, ValueError, OSError):  # replaced, closed, or not a text stream
            pass


def _utf(stream) -> bool:
    return (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "").startswith("utf")


def print_json(document) -> None:
    """One JSON document on stdout: characters the stream cannot encode are escaped (\\uXXXX), never lost."""
    sys.stdout.write(json.dumps(document, ensure_ascii=not _utf(sys.stdout), indent=2) + "\n")


def open_workspace(args, console: Console) -> Path:
    return workspace.locate(args.workspace, announce=lambda msg: warn(console, msg, style="cyan"))


def open_progress(ws: Path) -> Progress:
    """The workspace's history; a ProgressError (exit status 2) if it cannot be used.

    In a workspace that cannot be written (read-only, a full disk) the history is still read;
    recording then raises NotRecorded, whose message says so.
    """
    try:
        return Progress(workspace.database(ws))
    except ProgressError:
        why = workspace.unwritable(ws)
        if why is None:
            raise
        return Progress(workspace.database(ws), unwritable=why)


def writable(ws: Path, command: str) -> None:
    """Refuse (exit status 2, the real cause) a command that must write in a workspace that cannot be written."""
    why = workspace.unwritable(ws)
    if why:
        raise UsageError(workspace.refusal(ws, why, command))


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
