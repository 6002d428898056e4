"""The practice folder: copies of the stubs plus .kata/ (progress database). Never imports torch."""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from checker.catalogue import Kata, UnknownKata, all_katas, find
from checker.catalogue import KATAS
from checker.errors import UsageError
from checker.lang import t

MARKER = ".kata"


class WorkspaceError(Exception):
    """The workspace cannot be used; the message says why and what to do."""


READ_ONLY = (errno.EROFS, errno.EACCES, errno.EPERM)
# A file where kata keeps a folder (ws/backups, ws/torch), a folder where it keeps a file, a link that loops.
IN_THE_WAY = (errno.ENOTDIR, errno.EEXIST, errno.EISDIR, errno.ELOOP, errno.ENAMETOOLONG)
FULL = (errno.ENOSPC, getattr(errno, "EDQUOT", errno.ENOSPC))


def unwritable(folder: Path) -> str | None:
    """Why nothing can be written in folder: 'readonly', 'full', or None when it can be."""
    folder = Path(folder)
    target = folder / MARKER if (folder / MARKER).is_dir() else folder
    try:
        with tempfile.TemporaryFile(dir=target) as probe:
            probe.write(b"kata")
            probe.flush()
    except OSError as err:
        return reason(err)
    return None


def reason(err: OSError) -> str | None:
    """'readonly' or 'full' for an error that means so, else None."""
    if err.errno in READ_ONLY:
        return "readonly"
    if err.errno in FULL:
        return "full"
    return None


def refusal(folder: Path, why: str, command: str) -> str:
    """The message of a command that must write in folder and cannot (say(..., 'unwritable.*'))."""
    from checker.lang import language, say

    return say(language(), f"unwritable.{why}", folder=folder, command=command)


def in_the_way(err: OSError) -> str:
    """The message for an error in IN_THE_WAY: which path, and what to do."""
    return t("{path}: {error}. Something stands where kata keeps a folder or a file (a file named like one of "
             "its folders, for example): move it away and try again", path=err.filename, error=err.strerror or err)


def resolved(path) -> Path:
    """The absolute path, links followed; a link that loops (or any path the system cannot follow) is said."""
    try:
        return Path(path).expanduser().resolve()
    except (RuntimeError, OSError) as err:  # RuntimeError: Python before 3.13 on a symlink loop
        raise WorkspaceError(t("{path} cannot be followed ({error}): a symbolic link that loops, or a folder that "
                               "cannot be read; name another folder", path=path, error=err)) from None


def is_workspace(path: Path) -> bool:
    return (path / MARKER).is_dir()


def default_location() -> Path:
    """The platform's data folder: ~/.local/share (or $XDG_DATA_HOME) on Linux,
    ~/Library/Application Support on macOS, %LOCALAPPDATA% on Windows; then kata/workspace."""
    import platformdirs

    return Path(platformdirs.user_data_dir("kata", appauthor=False)) / "workspace"


def locate(explicit: str | None, *, announce=print, near: tuple[Path, ...] = ()) -> Path:
    """--workspace DIR, else $KATA_WORKSPACE, else the workspace holding a file named on the command line (near),
    else the current folder or a parent, else the default."""
    for given, source in ((explicit, "--workspace"), (os.environ.get("KATA_WORKSPACE"), "KATA_WORKSPACE")):
        if given:
            path = resolved(given)
            if not path.exists():
                raise WorkspaceError(t("workspace {path} (from {source}) does not exist; create it with `kata init {given}`",
                                       path=path, source=source, given=given))
            if not is_workspace(path):
                raise WorkspaceError(t("{path} (from {source}) is not a kata workspace; make it one with `kata init {given}`",
                                       path=path, source=source, given=given))
            return path
    for here in (*(resolved(p).parent for p in near), Path.cwd().resolve()):
        for folder in (here, *here.parents):
            if is_workspace(folder):
                return folder
    path = default_location()
    if not is_workspace(path):
        init(path)
        announce(t("Created your workspace at {path} (use --workspace DIR or KATA_WORKSPACE to choose another).",
                   path=path))
    return path


def init(path: Path) -> list[Path]:
    """Create (or complete) a workspace: copy every stub that is missing. Never overwrites a file."""
    path = resolved(path)
    if path.exists() and not path.is_dir():
        raise WorkspaceError(t("{path} exists and is not a folder", path=path))
    try:
        (path / MARKER).mkdir(parents=True, exist_ok=True)
        created = []
        for kata in all_katas():
            target = kata_file(path, kata)
            stub = (KATAS / kata.file).read_bytes()
            if not target.exists() and not target.is_symlink() or _cut_short(target, stub):
                target.parent.mkdir(parents=True, exist_ok=True)
                write_atomically(target, stub)
                created.append(target)
    except OSError as err:
        why = reason(err)
        if why:
            raise WorkspaceError(refusal(path, why, "init")) from None
        raise WorkspaceError(in_the_way(err) if err.errno in IN_THE_WAY else t(
            "cannot create a workspace at {path}: {error}", path=path, error=err.strerror or err)) from None
    return created


def write_atomically(target: Path, data: bytes) -> None:
    """target holds data in full, or stays as it was: written beside it, then renamed over it (a full disk or
    a kill midway leaves no half-written stub)."""
    fd, temporary = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(temporary, target)
    except BaseException:
        try:
            os.unlink(temporary)
        except OSError:
            pass
        raise


def _cut_short(target: Path, stub: bytes) -> bool:
    """A stub copy that an earlier init left cut short (empty, or the stub's first bytes only): never the
    user's work, which would differ from the stub somewhere."""
    try:
        data = read_source(target)
    except (OSError, WorkspaceError):
        return False
    return len(data) < len(stub) and stub.startswith(data)


MAX_SOURCE_BYTES = 1_000_000  # a kata file is a few kilobytes; past a megabyte it is not one


def read_source(path: Path) -> bytes:
    """A kata file's bytes, read only if it is a regular file of at most MAX_SOURCE_BYTES: never a device
    (a link to /dev/zero would be read without end), a pipe (which waits for a writer) or a huge file."""
    info = os.stat(path)
    if not stat.S_ISREG(info.st_mode):
        raise WorkspaceError(t("{path} is not a plain file (a folder, a device or a pipe): a kata file is a Python "
                               "file; move it away and run `kata init` to put the stub back", path=path))
    with open(path, "rb") as source:
        data = source.read(MAX_SOURCE_BYTES + 1)
    if len(data) > MAX_SOURCE_BYTES:
        raise WorkspaceError(t("{path} is larger than {megabytes} MB, which no kata file is: move it away and run "
                               "`kata init` to put the stub back", path=path, megabytes=MAX_SOURCE_BYTES // 10**6))
    return data


def kata_file(workspace: Path, kata: Kata) -> Path:
    return workspace / kata.file


# ----------------------------------------------------------------------------- `kata check PATH`


@dataclass(frozen=True)
class Target:
    """What `kata check ARG` checks: the kata, the file, and whether the check joins the workspace's history
    (only the workspace's own file of that kata does; unrecorded says why another file's does not)."""

    kata: Kata
    path: Path | None  # None without a workspace (--solution, --case): the kata is all that is needed
    unrecorded: str | None = None


def names_a_file(arg: str) -> bool:
    """An argument written as a file (torch/attention.py, ws/drills/DATE/torch/attention.py, C:\\ws\\x.py), not as a
    kata's name (attention, numpy/attention)."""
    return arg.strip().lower().endswith(".py")


def named_file(arg: str, ws: Path | None = None) -> Path | None:
    """The file arg names, absolute (links kept, as the user wrote it): from the current folder, else from the
    workspace (an editor's path relative to the workspace folder); None when neither holds it."""
    if not names_a_file(arg):
        return None
    given = Path(arg.strip().replace("\\", "/")).expanduser()  # a Windows editor's torch\attention.py too
    for base in (Path.cwd(), *([ws] if ws is not None else [])):
        path = Path(os.path.abspath(base / given))
        if path.is_file():
            return path
    return None


def kata_of(path: Path) -> Kata:
    """The kata a file belongs to, known by its last two parts (TRACK/NAME.py), as init and drill lay them out."""
    kata = next((k for k in all_katas() if path.parts[-2:] == PurePosixPath(k.file).parts), None)
    if kata is None:
        raise UsageError(t("{path} is not a kata's file: kata knows a file by its folder and name, TRACK/NAME.py "
                           "(torch/attention.py, numpy/softmax.py), as `kata init` and `kata drill` lay them out",
                           path=path))
    return kata


def target(arg: str, ws: Path | None) -> Target:
    """A kata's name, or any file of the workspace: its own (torch/attention.py), a drill's
    (drills/20250102-153000/torch/attention.py), a backup, written relative to the current folder or to the
    workspace, or absolute."""
    path = named_file(arg, ws)
    if path is None:
        try:
            kata = find(arg)
        except UnknownKata:
            if names_a_file(arg) and len(Path(arg.replace("\\", "/")).parts) > 2:  # a path, not a name: say so
                raise UsageError(t("{path}: no such file", path=arg)) from None
            raise
        return Target(kata, kata_file(ws, kata) if ws is not None else None)
    kata = kata_of(path)
    if ws is None:
        return Target(kata, path)
    if resolved(path) == resolved(kata_file(ws, kata)):
        return Target(kata, path)
    where = next((p.relative_to(ws) for p in (path, resolved(path)) if p.is_relative_to(ws)), None)
    if where is not None and where.parts[0] == "drills":
        why = t("{path} is a drill's file: checked, not recorded (a running drill records its own checks of it)",
                path=path)
    else:
        why = t("{path} is not the file of {kata} in the workspace {workspace}: checked, not recorded in its history",
                path=path, kata=kata.id, workspace=ws)
    return Target(kata, path, unrecorded=why)


def writable(ws: Path, command: str) -> None:
    """Refuse (exit status 2, the real cause) a command that must write in a workspace that cannot be written."""
    why = unwritable(ws)
    if why:
        raise UsageError(refusal(ws, why, command))


def database(workspace: Path) -> Path:
    return workspace / MARKER / "progress.db"
