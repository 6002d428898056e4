"""The packages kata runs on: a missing or broken one is the user's Python environment, not a bug of kata's.

Standard library only (and checker.lang, which is): this is what runs when rich or torch cannot be imported.
The console script enters here, so that even an import of kata's own CLI that fails on a dependency
ends with a message and exit status 2 instead of a traceback.
"""

from __future__ import annotations

import os
import sys

from checker.lang import chosen_language, register, speaking, t

# What pyproject.toml lists, by import name.
DEPENDENCIES = ("torch", "numpy", "rich", "psutil", "platformdirs", "watchfiles")
EXIT_USAGE = 2  # as checker.terminal says it; that module imports rich


def run() -> None:
    """The `kata` command: checker.cli.run, or a clear word about the environment if it cannot start."""
    try:
        from checker import cli
    except Exception as err:  # noqa: BLE001 - said below when it is a dependency's; else raised as it is
        if broken_dependency(err) is None:
            raise
        _say(err)
        sys.exit(EXIT_USAGE)
    cli.run()


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
        return t("{package} is not installed in this Python ({python}), and kata needs it. This is your "
                 "environment, not a bug in kata; install it as the README's set-up says:\n  {command}",
                 package=package, python=sys.executable, command=command)
    return t("{package} is installed but fails to import in this Python ({python}), and kata needs it: "
             "{error}. This is your environment, not a bug in kata; reinstall it as the README's set-up says:\n"
             "  {command}",
             package=package, python=sys.executable, error=error, command=command)


def _say(err: BaseException) -> None:
    """Printed without rich (it may be the package that is missing), in the language chosen."""
    with speaking(chosen_language(sys.argv[1:])):
        text = "kata: " + message(err)
    try:
        print(text, file=sys.stderr)
    except UnicodeEncodeError:  # a console that cannot show it: its own replacements
        encoding = getattr(sys.stderr, "encoding", None) or "ascii"
        print(text.encode(encoding, "replace").decode(encoding), file=sys.stderr)


_ZH = register({
    "{package} is not installed in this Python ({python}), and kata needs it. This is your environment, not a bug "
    "in kata; install it as the README's set-up says:\n  {command}":
        "这个 Python（{python}）里没有安装 {package}，而 kata 需要它。这是你的环境的问题，不是 kata 的缺陷；"
        "请按 README 的安装步骤装上：\n  {command}",
    "{package} is installed but fails to import in this Python ({python}), and kata needs it: {error}. This is "
    "your environment, not a bug in kata; reinstall it as the README's set-up says:\n  {command}":
        "{package} 已经安装，但在这个 Python（{python}）里导入失败，而 kata 需要它：{error}。这是你的环境的问题，"
        "不是 kata 的缺陷；请按 README 的安装步骤重新安装：\n  {command}",
})
