"""The `kata` side of a workspace's resident checker (checker.warm.server), and `kata server start|status|stop`.

A check handed to the server comes back as the KataResult a cold check makes; `kata` draws the report and records
the history itself, so a server that dies midway loses nothing: what it did not answer is checked cold. Never
imports torch (nor does unpickling what the server sends: the messages come back as Frozen text in both languages).

Where it lives, per workspace: WORKSPACE/.kata/server/ (0700) holds the key (0600), what the server says of itself
(info.json), its lock and its log; the socket too, where its path fits a Unix socket's 107 bytes (else in a folder
of this user's in the temporary folder, 0700). On Windows a named pipe. A connection without the key is refused.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import pickle
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

from checker import __version__
from checker.errors import UsageError
from checker.lang import LANGUAGES, t
from checker.state.workspace import MARKER

IDLE_MINUTES = 15  # a server nobody asked for this long exits
START_SECONDS = 180  # `kata server start` waits this long for a new server to answer
ANSWER_SECONDS = 600  # a client waits this long for one result, then checks cold
NO_SERVER = "KATA_NO_SERVER"  # set (to anything but 0): as --no-server, for every command
UNIX_PATH_BYTES = 100  # a Unix socket's path must fit in 107 bytes: kept under it


@dataclass(frozen=True)
class Place:
    """Where a workspace's server is found: its folder, and its socket's or pipe's address."""

    workspace: Path
    folder: Path
    address: str
    family: str

    @property
    def key(self) -> Path:
        return self.folder / "key"

    @property
    def info(self) -> Path:
        return self.folder / "info.json"

    @property
    def lock(self) -> Path:
        return self.folder / "lock"

    @property
    def log(self) -> Path:
        return self.folder / "log"


def place(ws: Path) -> Place:
    folder = Path(ws) / MARKER / "server"
    return Place(Path(ws), folder, *address(folder, Path(ws)))


def address(folder: Path, ws: Path) -> tuple[str, str]:
    """(address, family): a named pipe on Windows, else a Unix socket in folder, or in a folder of this user's in
    the temporary folder when folder's path is too long for one."""
    name = hashlib.sha256(str(ws).encode("utf-8", "surrogateescape")).hexdigest()[:24]
    if sys.platform == "win32":
        return rf"\\.\pipe\kata-{_user()}-{name}", "AF_PIPE"
    inside = folder / "sock"
    if len(os.fsencode(inside)) <= UNIX_PATH_BYTES:
        return str(inside), "AF_UNIX"
    import tempfile

    return str(Path(tempfile.gettempdir()) / f"kata-{_user()}" / f"{name}.sock"), "AF_UNIX"


def _user() -> str:
    if hasattr(os, "getuid"):
        return str(os.getuid())
    import getpass

    return hashlib.sha256(getpass.getuser().encode()).hexdigest()[:12]


def private_folder(folder: Path) -> None:
    """folder, made if missing, readable by its owner only (0700); refused when it belongs to someone else."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    if hasattr(os, "getuid"):
        if folder.stat().st_uid != os.getuid():
            raise PermissionError(f"{folder} belongs to another user")
        os.chmod(folder, 0o700)


def wanted(no_server: bool = False) -> bool:
    """Whether checks may go to a server: not with --no-server, nor with KATA_NO_SERVER set."""
    return not no_server and os.environ.get(NO_SERVER, "").strip() in ("", "0")


def identity() -> dict:
    """What must match between `kata` and a server for it to check as `kata` would: the same Python, the same
    package (the server also compares the package's files before each check), the same start method."""
    import checker

    return {"python": sys.executable, "package": str(Path(checker.__file__).resolve().parent),
            "version": __version__, "sandbox": os.environ.get("KATA_SANDBOX", "").strip().lower()}


# ----------------------------------------------------------------------------- what comes back


class Frozen(str):
    """A message of the result (checker.lang.Message) as the text it is in each language: drawn again in the
    reader's language (said) without the objects it was made of, some of which need torch."""

    texts: dict

    def __new__(cls, text: str, texts: dict):
        made = super().__new__(cls, text)
        made.texts = texts
        return made

    def said(self, lang: str) -> str:
        return self.texts.get(lang, str(self))

    def __reduce__(self):
        return Frozen, (str(self), self.texts)


def frozen(value):
    """value with every message in it made Frozen, and everything else plain data (a number of numpy's a float)."""
    from dataclasses import fields, is_dataclass, replace

    from checker.lang import said

    if value is None or type(value) in (str, int, float, bool):
        return value
    if isinstance(value, str) or hasattr(type(value), "said"):
        return Frozen(str(value), {lang: str(said(value, lang)) for lang in LANGUAGES})
    if type(value) in (list, tuple):
        return type(value)(frozen(v) for v in value)
    if type(value) is dict:
        return {frozen(k): frozen(v) for k, v in value.items()}
    if is_dataclass(value) and not isinstance(value, type):
        return replace(value, **{f.name: frozen(getattr(value, f.name)) for f in fields(value) if f.init})
    if hasattr(value, "item"):  # a numpy or torch scalar
        return value.item()
    return Frozen(str(value), {lang: str(value) for lang in LANGUAGES})


_ALLOWED = {("checker.results", "KataResult"), ("checker.results", "CheckResult"), ("checker.warm.client", "Frozen")}


class _Results(pickle.Unpickler):
    def find_class(self, module, name):
        if (module, name) not in _ALLOWED:  # nothing that would import torch, nor anything else
            raise pickle.UnpicklingError(f"refused {module}.{name}")
        return super().find_class(module, name)


def loads(data: bytes):
    return _Results(io.BytesIO(data)).load()


def dumps(value) -> bytes:
    return pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)


# ----------------------------------------------------------------------------- talking to a server


class Session:
    """One connection to a workspace's server: the checks of one command."""

    def __init__(self, conn):
        self.conn = conn
        self.failed = ""  # why the server stopped answering: "stale" (it exited), "gone", "error"
        self.asked = 0  # how many checks were sent

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def close(self) -> None:
        try:
            self.conn.close()
        except OSError:
            pass

    def ask(self, request: dict):
        """One request, one reply; None when the server did not answer."""
        try:
            self.conn.send_bytes(dumps(request))
            return self._reply()
        except (OSError, EOFError):
            return None

    def check(self, work: list[tuple[str, Path]], options: dict, lang: str):
        """Yield the KataResult of each (kata id, path) of work, in order, as the server sends them; stop at the
        first it does not answer (self.failed says why), for the caller to check the rest cold."""
        self.send(work, options, lang)
        return self.results()

    def send(self, work: list[tuple[str, Path]], options: dict, lang: str) -> None:
        """Ask for the checks of work now (the server starts while this process gets ready to draw them)."""
        self.asked = len(work)
        request = {"op": "check", "identity": identity(), "lang": lang, "cwd": os.getcwd(), "options": options,
                   "jobs": [(kata_id, str(path)) for kata_id, path in work]}
        try:
            self.conn.send_bytes(dumps(request))
        except OSError:
            self.asked, self.failed = 0, "gone"

    def results(self):
        """The results of what send() asked for, as check() yields them."""
        try:
            for _ in range(self.asked):
                reply = self._reply()
                if not (isinstance(reply, tuple) and reply[:1] == ("result",)):
                    self.failed = reply[0] if isinstance(reply, tuple) and reply else "gone"
                    return
                yield reply[1]
        except (OSError, EOFError, pickle.UnpicklingError):
            self.failed = "gone"
        finally:
            self.close()

    def _reply(self):
        if not self.conn.poll(ANSWER_SECONDS):
            raise EOFError("no answer")
        return loads(self.conn.recv_bytes())


def connect(ws: Path) -> Session | None:
    """A session with the workspace's server, or None when none answers (none runs, or it is starting)."""
    where = place(ws)
    try:
        key = where.key.read_bytes()
    except OSError:
        return None
    if where.family == "AF_UNIX" and not os.path.exists(where.address):
        return None
    from multiprocessing.connection import AuthenticationError, Client

    try:
        return Session(Client(where.address, where.family, authkey=key))
    except (OSError, EOFError, AuthenticationError, ValueError):
        return None


def starting_or_running(where: Place, grace: float = 0.0) -> bool:
    """Whether a server holds the workspace's lock (it is starting, or runs). grace: seconds to wait for the lock
    of a server that just died. Its peer may read the end of the connection before the lock is let go: the
    system closes a killed process's files in no set order."""
    if not where.folder.is_dir():
        return False
    deadline = time.monotonic() + grace
    while (held := hold(where.lock)) is None:
        if time.monotonic() >= deadline:
            return True
        time.sleep(0.05)
    release(held)
    return False


def hold(path: Path):
    """The lock at path, taken without waiting: an open file descriptor, or None when another process holds it."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if sys.platform == "win32":
            import msvcrt

            msvcrt.locking(fd, msvcrt.LK_NBLCK, 1)
        else:
            import fcntl

            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def release(fd) -> None:
    os.close(fd)  # closing the file lets go of the lock, on every system


def start(ws: Path, after: int | None = None, grace: float = 0.0) -> bool:
    """Start the workspace's server in the background, detached from this process, unless one is starting or
    running. after: a process id the server waits for before importing torch (the cold check it would slow
    down). grace: as starting_or_running's, after a server stopped answering. False when none was started (one
    runs, or the workspace's folder cannot hold one)."""
    where = place(ws)
    try:
        private_folder(where.folder)
        if starting_or_running(where, grace):
            return False
        log = os.open(where.log, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    except OSError:  # a read-only workspace, someone else's folder: checks stay cold
        return False
    import checker

    env = {**os.environ, "PYTHONPATH": os.pathsep.join(
        filter(None, [str(Path(checker.__file__).resolve().parent.parent), os.environ.get("PYTHONPATH")]))}
    command = [sys.executable, "-m", "checker.warm.server", str(ws)] + (["--after", str(after)] if after else [])
    try:
        subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=log, stderr=log, cwd=ws, env=env, **detached())
    except OSError:
        return False
    finally:
        os.close(log)
    return True


def detached() -> dict:
    """Popen's arguments for a process that outlives `kata` and its terminal: a session of its own on POSIX, a
    detached process without a window on Windows."""
    if sys.platform == "win32":
        flags = 0x00000008 | 0x00000200 | 0x08000000  # DETACHED_PROCESS, CREATE_NEW_PROCESS_GROUP, CREATE_NO_WINDOW
        return {"creationflags": flags, "close_fds": True}
    return {"start_new_session": True, "close_fds": True}


# ----------------------------------------------------------------------------- kata server


def _status(ws: Path) -> dict:
    session = connect(ws)
    reply = session.ask({"op": "status"}) if session else None
    if session:
        session.close()
    if not (isinstance(reply, tuple) and reply[0] == "status"):
        return {"running": False, "workspace": str(ws), "said": t(
            "No checker runs for {workspace}; the next `kata check` starts one (or `kata server start`).",
            workspace=ws)}
    info = reply[1]
    return {"running": True, **info, "said": t(
        "A checker runs for {workspace} (pid {pid}): up {minutes} min, {count} check(s) served, idle {idle} s. It "
        "stops after {limit} minutes idle, when kata is updated or its workspace deleted, or with `kata server stop`.",
        workspace=ws, pid=info["pid"], minutes=round(info["up_seconds"] / 60), count=info["served"],
        idle=round(info["idle_seconds"]), limit=IDLE_MINUTES)}


def _start(ws: Path) -> dict:
    status = _status(ws)
    if status["running"]:
        status["said"] = t("A checker already runs for {workspace} (pid {pid}).", workspace=ws, pid=status["pid"])
        return status
    start(ws)
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        time.sleep(0.2)
        status = _status(ws)
        if status["running"]:
            status["said"] = t("The checker of {workspace} runs (pid {pid}): every `kata check` there hands it the "
                               "work. It stops after {limit} minutes idle.", workspace=ws, pid=status["pid"],
                               limit=IDLE_MINUTES)
            return status
    log = place(ws).log
    said = log.read_text(encoding="utf-8", errors="replace").strip()[-2000:] if log.is_file() else ""
    raise UsageError(t("the checker of {workspace} did not answer within {seconds} s; what it said: {log}",
                       workspace=ws, seconds=START_SECONDS, log=said or "-"))


def _stop(ws: Path) -> dict:
    session = connect(ws)
    reply = session.ask({"op": "stop"}) if session else None
    if session:
        session.close()
    if not (isinstance(reply, tuple) and reply[0] == "stopping"):
        return {"running": False, "workspace": str(ws),
                "said": t("No checker runs for {workspace}: nothing to stop.", workspace=ws)}
    return {"running": False, "workspace": str(ws), "pid": reply[1],
            "said": t("The checker of {workspace} stopped (pid {pid}).", workspace=ws, pid=reply[1])}


ACTIONS = {"start": _start, "status": _status, "stop": _stop}  # kata server ACTION (checker.app.cli.cmd_server)


def read_info(ws: Path) -> dict:
    """What the server wrote of itself (info.json), or {}."""
    try:
        return json.loads(place(ws).info.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
