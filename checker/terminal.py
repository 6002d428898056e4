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
from checker.progress import Progress

EXIT_OK, EXIT_NOT_PASSED, EXIT_USAGE, EXIT_INTERNAL, EXIT_INTERRUPTED = 0, 1, 2, 3, 130


class UsageError(Exception):
    """Bad input from the user: exit status 2 with this message."""


def warn(console: Console, message: str, style: str = "yellow") -> None:
    """Notes go to stderr, so that --json output stays one clean document on stdout."""
    Console(stderr=True, no_color=console.no_color, highlight=False).print(Text(message, style=style))


def print_json(document) -> None:
    sys.stdout.write(json.dumps(document, ensure_ascii=False, indent=2) + "\n")


def open_workspace(args, console: Console) -> Path:
    return workspace.locate(args.workspace, announce=lambda msg: warn(console, msg, style="cyan"))


def open_progress(ws: Path) -> Progress:
    """The workspace's history; a ProgressError (exit status 2) if it cannot be used."""
    return Progress(workspace.database(ws))


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
