"""The packages kata runs on: a missing or broken one is the user's Python environment, not a bug of kata's.

Standard library only (and checker.lang, which is): this is what runs when rich or torch cannot be imported.
The console script (checker.__main__) comes here when an import of kata's own CLI fails on a dependency,
so that it ends with a message and exit status 2 instead of a traceback.
"""

from __future__ import annotations

import os
import sys

from checker.lang import chosen_language, speaking, tr

# What pyproject.toml lists, by import name.
DEPENDENCIES = ("torch", "numpy", "rich", "psutil", "platformdirs", "watchfiles")


def broken_dependency(err: BaseException) -> str | None:
    """The dependency whose import raised err: missing (ImportError naming it), or failing inside its own
    files while it was being imported (a DLL that does not load, a NumPy built for another ABI)."""
    if isinstance(err, ImportError) and err.name and err.name.partition(".")[0] in DEPENDENCIES:
        return err.name.partition(".")[0]
    import traceback  # only on an error: every command starts through this module

    for frame in traceback.extract_tb(err.__traceback__):  # a module of the dependency's, while it was imported
        parts = os.path.normcase(frame.filename).split(os.sep)
        if frame.name == "<module>" and ("site-packages" in parts or "dist-packages" in parts):
            found = [name for name in DEPENDENCIES if name in parts[:-1]]
            if found:
                return found[0]
    return None


def message(err: BaseException) -> str:
    """What went wrong, that it is the environment, and the install line for this system."""
    package = broken_dependency(err) or "?"
    missing = isinstance(err, ModuleNotFoundError)
    command = f"{os.path.basename(sys.executable)} -m pip install {'' if missing else '--force-reinstall '}{package}"
    if package == "torch" and sys.platform != "darwin":  # the CPU build: PyPI's Linux torch is the CUDA one
        command += " --index-url https://download.pytorch.org/whl/cpu"
    error = f"{type(err).__name__}: {err}".strip().rstrip(".")
    if missing:
        return tr("{package} is not installed in this Python ({python}), and kata needs it. This is your "
                 "environment, not a bug in kata; install it as the README's set-up says:\n  {command}",
                 package=package, python=sys.executable, command=command)
    return tr("{package} is installed but fails to import in this Python ({python}), and kata needs it: "
             "{error}. This is your environment, not a bug in kata; reinstall it as the README's set-up says:\n"
             "  {command}",
             package=package, python=sys.executable, error=error, command=command)


def say(err: BaseException) -> None:
    """Printed without rich (it may be the package that is missing), in the language chosen."""
    with speaking(chosen_language(sys.argv[1:])):
        text = "kata: " + message(err)
    try:
        print(text, file=sys.stderr)
    except UnicodeEncodeError:  # a console that cannot show it: its own replacements
        encoding = getattr(sys.stderr, "encoding", None) or "ascii"
        print(text.encode(encoding, "replace").decode(encoding), file=sys.stderr)
