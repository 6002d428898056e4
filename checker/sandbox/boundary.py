"""The sandbox's boundary, in the child: an audit hook (PEP 578) that refuses what a kata never needs.

Added when the child starts, before any file of the user's is imported; a hook cannot be removed. It
judges the events the user's code raises: a frame on the stack whose file lies outside the standard
library, the installed packages and kata itself (the user's file, code it exec'd), or a thread kata did
not start, is the user's code. Refused, with PermissionError and a record the checker reads afterwards:
- starting a process (os.system, subprocess, os.fork, os.exec*, posix_spawn) or sending a signal;
- native code through ctypes, and looking into the interpreter (gc.get_objects, tracing hooks, audit hooks);
- reading or writing kata's own files (the reference answers and the checker: checker/, solutions/) or
  a workspace's history (.kata/), and writing, removing or renaming anything inside a workspace.
The checker's own work in the child raises the same events without a frame of the user's, so it is never refused.
What it records (refusals, and calls of a kata's off-limits functions, checker.sandbox.rules) is kept
where the user's code cannot reach or clear it, and read with report().

Not covered: code the user compiles into a native extension, and a user who edits the installed package.
"""

from __future__ import annotations

import os
import sys
import sysconfig
import threading

from checker.lang import t
from checker.state.workspace import MARKER as _MARKER

_PROCESS = {"os.system", "os.exec", "os.posix_spawn", "os.spawn", "os.fork", "os.forkpty", "subprocess.Popen",
            "os.startfile", "pty.spawn", "_winapi.CreateProcess", "_posixsubprocess.fork_exec"}
_SIGNAL = {"os.kill", "os.killpg", "signal.pthread_kill"}
_LOOK_INSIDE = {"gc.get_objects", "gc.get_referrers", "gc.get_referents", "sys.settrace", "sys.setprofile",
                "sys.addaudithook", "sys._current_frames"}
_READ = {"open", "sqlite3.connect", "os.listdir", "os.scandir", "shutil.copyfile"}  # the first argument is a path
_WRITE = {"os.remove", "os.rename", "os.rmdir", "os.mkdir", "os.chmod", "os.chown", "os.utime", "os.truncate",
          "os.link", "os.symlink", "shutil.rmtree", "shutil.copyfile", "shutil.copytree", "shutil.move"}
_KIND = {**dict.fromkeys(_PROCESS, "process"), **dict.fromkeys(_SIGNAL, "signal"),
         **dict.fromkeys(_LOOK_INSIDE, "inspect")}  # what is refused outright, by event; ctypes.* is "native"
_MAX_RECORDS = 50

_ours: set[int] = set()  # threads kata started in this process (besides the main one)


def trust_this_thread() -> None:
    """Called by a thread of kata's (the parent watch) as it starts."""
    _ours.add(threading.get_ident())


def install(checker_dir: str, secret_dirs: list[str], entry) -> None:
    """Add the hook. checker_dir and secret_dirs (the reference answers) may not be touched by the user.
    entry: the code of the child's entry point; frames below it (a forked child keeps the checker's) are not
    looked at."""
    own = tuple(_norm(p) + os.sep for p in {sysconfig.get_paths()[k] for k in ("stdlib", "platstdlib", "purelib",
                                                                              "platlib")} | {checker_dir})
    secret = tuple(_norm(p) + os.sep for p in [checker_dir, *secret_dirs])
    main = threading.main_thread().ident
    records: list[tuple] = []
    theirs: dict[object, bool] = {}  # code object -> written by the user (outside the places above)

    def users_code() -> bool:
        if threading.get_ident() != main and threading.get_ident() not in _ours:
            return True  # a thread the user's code started
        frame = sys._getframe(2)
        while frame is not None and frame.f_code is not entry:
            code = frame.f_code
            mine = theirs.get(code)
            if mine is None:
                name = code.co_filename
                mine = theirs[code] = not (name.startswith("<frozen ") or _norm(name).startswith(own))
            if mine:
                return True
            frame = frame.f_back
        return False

    def refuse(kind: str, detail: str) -> None:
        if len(records) < _MAX_RECORDS and ("refused", kind, detail) not in records:
            records.append(("refused", kind, detail))
        raise PermissionError(says(kind, detail))

    def hook(event: str, args: tuple) -> None:
        if event == "kata.trapped":  # an off-limits call (checker.sandbox.rules): (line, name)
            entry = ("trapped", int(args[0]), str(args[1]))
            if len(records) < _MAX_RECORDS and entry not in records:
                records.append(entry)
            return
        if event == "kata.report":
            args[0].extend(records)
            return
        kind = _KIND.get(event) or ("native" if event.startswith("ctypes.") else None)
        if kind:
            if users_code():
                refuse(kind, event)
        elif event in _READ or event in _WRITE:
            paths = [p for p in args[:2] if isinstance(p, (str, bytes, os.PathLike))]
            if not paths or not users_code():
                return
            writes = event in _WRITE or event == "open" and _writes(args)
            for i, path in enumerate(paths if event in _WRITE or event == "shutil.copyfile" else paths[:1]):
                where = _norm(path)
                if where.startswith(secret) or (os.sep + _MARKER + os.sep) in where + os.sep:
                    refuse("secret", os.fsdecode(path))
                if (writes and (event != "shutil.copyfile" or i == 1)) and _in_workspace(where):
                    refuse("workspace", os.fsdecode(path))

    sys.addaudithook(hook)
    _audit_fork_exec()


def _audit_fork_exec() -> None:
    """_posixsubprocess.fork_exec starts a process without an audit event of its own (Python 3.11, 3.12):
    subprocess raises one in Popen, but the function can be called directly. Raise one here too."""
    try:
        import _posixsubprocess
    except ImportError:  # Windows: _winapi.CreateProcess raises its own
        return
    original = _posixsubprocess.fork_exec

    def fork_exec(*args, **kwargs):
        sys.audit("_posixsubprocess.fork_exec")
        return original(*args, **kwargs)

    _posixsubprocess.fork_exec = fork_exec
    if "subprocess" in sys.modules:  # imported before this (by the checker): its own alias too
        sys.modules["subprocess"]._fork_exec = fork_exec


def says(kind: str, detail: str) -> str:
    """One refusal, in the language spoken."""
    return t(_SAYS[kind], detail=detail)


_SAYS = {
    "process": "your code tried to start a process ({detail}), and kata's sandbox refused it",
    "signal": "your code tried to send a signal to a process ({detail}), and kata's sandbox refused it",
    "native": "your code tried to run native code through ctypes ({detail}), and kata's sandbox refused it",
    "inspect": "your code tried to look inside the interpreter ({detail}), and kata's sandbox refused it",
    "secret": "your code tried to open kata's own files or your history ({detail}), and kata's sandbox refused it",
    "workspace": "your code tried to write, remove or rename a file in your workspace ({detail}), and kata's "
                 "sandbox refused it",
}


def report() -> list[tuple]:
    """What the hook recorded: ("refused", kind, detail) and ("trapped", line, name)."""
    box: list[tuple] = []
    sys.audit("kata.report", box)
    return box


def _norm(path) -> str:
    return os.path.normcase(os.path.realpath(os.fsdecode(path)))


def _writes(args: tuple) -> bool:
    mode, flags = (args[1] if len(args) > 1 else None), (args[2] if len(args) > 2 else 0)
    if isinstance(mode, str):
        return any(c in mode for c in "wax+")
    return bool(flags & (os.O_WRONLY | os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_APPEND)) if isinstance(flags, int) else False


def _in_workspace(path: str) -> bool:
    """Whether a folder above path is a workspace (holds .kata/)."""
    folder = os.path.dirname(path)
    while True:
        if os.path.isdir(os.path.join(folder, _MARKER)):
            return True
        parent = os.path.dirname(folder)
        if parent == folder:
            return False
        folder = parent
