"""Off-limits shortcuts, enforced twice: by reading the source, and by trapping calls at run time.

A kata's `forbidden` list (catalogue.toml) holds dotted names: a function or class
(`torch.nn.functional.scaled_dot_product_attention`, `torch.nn.LayerNorm`) or a whole module
(`torch` in the NumPy track).
"""

from __future__ import annotations

import ast
import functools
import importlib
import sys


def scan(source: str, forbidden: tuple[str, ...]) -> list[tuple[int, str]]:
    """(line, dotted name) for every import or use of a forbidden name in the source."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return []  # the loader reports syntax errors with file, line and caret
    aliases: dict[str, str] = {}  # local name -> dotted name it stands for
    found: list[tuple[int, str]] = []

    def hit(line: int, dotted: str) -> None:
        for name in forbidden:
            if dotted == name or dotted.startswith(name + "."):
                if (line, name) not in found:
                    found.append((line, name))

    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
                hit(node.lineno, a.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for a in node.names:
                dotted = f"{node.module}.{a.name}"
                aliases[a.asname or a.name] = dotted
                hit(node.lineno, dotted)
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) or isinstance(node, ast.Name):
            dotted = _dotted(node, aliases)
            if dotted:
                hit(node.lineno, dotted)
    return sorted(found)


def _dotted(node, aliases: dict[str, str]) -> str | None:
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    if not isinstance(node, ast.Name) or node.id not in aliases:
        return None
    return ".".join([aliases[node.id], *reversed(parts)])


# ----------------------------------------------------------------------------- run time (in the child)

TRAPPED: list[tuple[int, str]] = []  # (line in the user's file, name), filled by the wrappers


def install_traps(forbidden: tuple[str, ...], user_path: str) -> None:
    """Wrap each forbidden function or class that can be imported, so calls are recorded.

    The call still runs (the user sees their result); the kata fails with the name and line.
    Installed before the user's file is imported, so `from x import f` picks up the wrapper.
    """
    for name in forbidden:
        module_name, _, attr = name.rpartition(".")
        if not module_name or module_name not in sys.modules and not _importable(module_name):
            continue
        try:
            owner = importlib.import_module(module_name)
            original = getattr(owner, attr)
        except (ImportError, AttributeError):
            continue  # a whole module (e.g. `torch` in the NumPy track) is caught by the source scan
        if isinstance(original, type):
            _trap_class(original, name, user_path)
        elif callable(original):
            setattr(owner, attr, _wrap(original, name, user_path))


def _importable(module_name: str) -> bool:
    try:
        importlib.import_module(module_name)
        return True
    except ImportError:
        return False


def _record(name: str, user_path: str) -> None:
    frame = sys._getframe(2)
    while frame is not None:
        if frame.f_code.co_filename == user_path:
            entry = (frame.f_lineno, name)
            if entry not in TRAPPED:
                TRAPPED.append(entry)
            return
        frame = frame.f_back


def _wrap(fn, name: str, user_path: str):
    @functools.wraps(fn)
    def trapped(*args, **kwargs):
        _record(name, user_path)
        return fn(*args, **kwargs)

    return trapped


def _trap_class(cls: type, name: str, user_path: str) -> None:
    original_init = cls.__init__

    @functools.wraps(original_init)
    def trapped_init(self, *args, **kwargs):
        _record(name, user_path)
        original_init(self, *args, **kwargs)

    cls.__init__ = trapped_init
