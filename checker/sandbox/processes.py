"""Starting, watching and ending the process that runs the user's code, the same way on every system.

Never imports torch: `kata check` starts a spawn child before it imports torch itself.

Three start methods, one behaviour (KATA_SANDBOX=fork|forkserver|spawn overrides the default):
  fork        Linux without an accelerator: the child is a copy of the checker, torch already imported.
  forkserver  macOS: forking a process whose numpy/torch/Accelerate threads have run is unsafe
              there, so a server that imported torch (checker.sandbox.preload) but ran nothing forks
              each child. Linux too where torch may see an accelerator (see accelerator()).
  spawn       Windows (no fork): a fresh interpreter; one is started ahead of time (the spare),
              so the user does not wait for torch to be imported twice in a row.
Whatever runs in the child is imported by name (serve, checker.sandbox), never a closure.
"""

from __future__ import annotations

import importlib
import multiprocessing
import os
import signal
import sys
import threading

import psutil  # imported here, once: a forked child inherits it instead of importing it again

METHODS = ("fork", "forkserver", "spawn")
PARENT_CHECK_SECONDS = 0.2  # how often a child looks whether the checker still lives

_spare = None  # a _Starting: the next child, started ahead of time (spawn, forkserver)
_keep_spare = False  # start the next spare whenever one is taken (watch, drill, several katas)
_recycled = None  # (process, pipe): a child that served a file and came back clean (spawn)


def start_method() -> str:
    """KATA_SANDBOX if set, else the system's safe default."""
    chosen = os.environ.get("KATA_SANDBOX", "").strip().lower()
    if not chosen:
        if sys.platform.startswith("linux"):
            return "forkserver" if accelerator() else "fork"
        return {"darwin": "forkserver"}.get(sys.platform, "spawn")
    from checker.errors import UsageError
    from checker.lang import t

    available = multiprocessing.get_all_start_methods()
    if chosen not in METHODS or chosen not in available:
        raise UsageError(t("KATA_SANDBOX={chosen} is not a start method this system has; use one of {methods}",
                           chosen=chosen, methods=", ".join(m for m in METHODS if m in available)))
    if chosen == "fork" and accelerator():
        # Seen on an H100 with torch 2.11+cu130: 29 of the 55 references failed their gradient checks.
        raise UsageError(t("KATA_SANDBOX=fork cannot be used where torch may see an accelerator (a CUDA, ROCm or "
                           "XPU build): a child forked after a backward pass cannot run backward, so every "
                           "gradient check would fail. Leave KATA_SANDBOX unset, or set it to forkserver or spawn"))
    return chosen


def accelerator() -> bool:
    """Whether torch may see an accelerator in this process; then no sandbox is forked from the checker.

    Once a backward pass has run while an accelerator is visible, torch's autograd engine has started a
    thread per device, and a child forked afterwards cannot run backward at all ("Unable to handle
    autograd's threading in combination with fork-based multiprocessing"). The checker runs the
    references' backward passes, so there every child comes from a fork server that runs none.
    Known before torch is imported: a CUDA, ROCm or XPU build (torch/version.py, read as text). Once it
    is imported, also any device torch reports (a backend it loads by itself, such as Ascend's torch_npu).
    """
    global _accelerator
    if _accelerator is None:
        _accelerator = _accelerator_build()
    if not _accelerator and "torch" in sys.modules and not _asked_torch:
        _accelerator = _accelerator_reported(sys.modules["torch"])
    return _accelerator


_accelerator = None  # None: not known yet
_asked_torch = False


def _accelerator_build() -> bool:
    import re

    try:
        with open(_torch_version_file(), encoding="utf-8") as f:
            text = f.read()
    except Exception:  # noqa: BLE001 - no torch, or an unusual one: decided once torch is imported
        return False
    return re.search(r"^(cuda|hip|xpu)\b[^=\n]*=\s*['\"]", text, re.MULTILINE) is not None


def _torch_version_file() -> str:
    import importlib.util

    return os.path.join(importlib.util.find_spec("torch").submodule_search_locations[0], "version.py")


def _accelerator_reported(torch) -> bool:
    global _asked_torch
    _asked_torch = True
    try:
        return bool(torch.accelerator.is_available())
    except Exception:  # noqa: BLE001 - a torch without torch.accelerator (before 2.6): its build said it
        return False


def launch():
    """A new child, serving nothing yet: (process, the checker's end of its pipe)."""
    method = start_method()
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["checker.sandbox.preload"])
    ours, theirs = ctx.Pipe()
    # Under fork the child inherits our end too; it closes it, so that our death reads as EOF there.
    # A spare of a long-lived process gets warm while it waits (fork: the checker itself is warm).
    args = (theirs, ours if method == "fork" else None, os.getpid(), _keep_spare and method == "spawn")
    proc = ctx.Process(target=serve, args=args, daemon=True)
    sys.stdout.flush()
    sys.stderr.flush()
    proc.start()
    theirs.close()
    return proc, ours


class _Starting:
    """launch() in the background (under forkserver it waits until the server has imported torch), on the one thread
    that starts children ahead of time. That thread lives as long as the checker: Linux's parent-death signal, which a
    child sets for itself (die_with), follows the thread that started it, not the process, so a starting thread that
    ended after its child had set the signal killed the child (under spawn, a check whose user's code never ran)."""

    def __init__(self):
        self.child = None
        self._done = threading.Event()
        _launcher().put(self)

    def run(self) -> None:
        try:
            self.child = launch()
        except Exception:  # noqa: BLE001 - a fork server that cannot start (torch missing) or a process at its
            self.child = None  # exit: take() launches in the caller's thread, where the error is said as a verdict
        finally:
            self._done.set()

    def join(self) -> None:
        self._done.wait()


_requests = None  # (pid, queue): the launching thread's queue, in the process that started that thread


def _launcher():
    """The queue of the thread that starts children ahead of time, started on first use (again in a forked copy)."""
    global _requests
    if _requests is None or _requests[0] != os.getpid():
        import queue

        _imported_for_launch()
        _requests = (os.getpid(), queue.SimpleQueue())
        threading.Thread(target=_launch_forever, args=(_requests[1],), name="kata-prestart", daemon=True).start()
    return _requests[1]


def _imported_for_launch() -> None:
    """Import here, in the caller's thread, what starting a child imports, so that the thread that starts children
    imports nothing while this one imports torch. Two threads importing at once can cross: Python then hands one of
    them a module half imported, and the thread fails (seen as a parallel worker that stopped with "partially
    initialized module 'typing' has no attribute 'ClassVar'")."""
    method = start_method()
    popen = {"fork": ["popen_fork"], "forkserver": ["popen_forkserver", "forkserver"],
             "spawn": ["popen_spawn_win32" if sys.platform == "win32" else "popen_spawn_posix"]}[method]
    for name in ["connection", "spawn", "util", *popen] + ([] if sys.platform == "win32" else ["resource_tracker"]):
        importlib.import_module(f"multiprocessing.{name}")


def _launch_forever(requests) -> None:
    while True:
        requests.get().run()


def prestart(keep: bool = False) -> None:
    """Under spawn or forkserver, start the next child now, while this process imports torch.

    keep: also start a new spare each time one is taken, for a process that checks many times.
    """
    global _spare, _keep_spare
    _keep_spare = _keep_spare or keep
    if _spare is None and start_method() != "fork":
        _spare = _Starting()


def recycles() -> bool:
    """Whether a child released clean serves the next file: under spawn, where a new one imports torch again
    (seconds); a forked child costs milliseconds and is always new."""
    return start_method() == "spawn"


def recycle(child) -> None:
    """Keep a child that served a file and came back clean (checker.sandbox: nothing it imported changed a
    library, a setting, a thread or a process) for the next file."""
    global _recycled
    if _recycled is not None:
        _end(_recycled)
    _recycled = child


def _end(child) -> None:
    kill_tree(child[0].pid)
    child[1].close()


def take():
    """A released child, else the spare if there is a live one, else a new child: (process, the checker's end
    of its pipe)."""
    global _spare, _recycled
    if _recycled is not None:
        child, _recycled = _recycled, None
        if child[0].is_alive():
            return child
        child[1].close()
    starting, _spare = _spare, None
    spare = None
    if starting is not None:
        starting.join()
        spare = starting.child
    if spare is not None and not spare[0].is_alive():
        spare[1].close()
        spare = None
    current = spare or launch()
    if _keep_spare and start_method() != "fork":
        _spare = _Starting()
    return current


# What the child does once it is set up: named, not imported, as the fork server's preload is. That module
# imports torch, which the checker starts children before importing, and it uses this one.
CHILD_WORK = "checker.sandbox.child:_child"


def serve(conn, inherited, checker_pid: int, warm_up: bool) -> None:
    """The child's entry point, imported by name under every start method."""
    from checker import catalogue
    from checker.sandbox import boundary

    # Ctrl-C reaches every process of the terminal's group; the checker ends its children itself. One still starting
    # would print a KeyboardInterrupt traceback on the console it has not let go of yet.
    interrupt = signal.signal(signal.SIGINT, signal.SIG_IGN)
    boundary.install(str(catalogue.PACKAGE), [str(catalogue.SOLUTIONS)], serve.__code__)  # before any code of the user's
    die_with(checker_pid)  # first: importing torch (spawn) takes seconds
    adopt_orphans()
    let_go_of_the_console()
    signal.signal(signal.SIGINT, interrupt)
    module, _, function = CHILD_WORK.partition(":")
    getattr(importlib.import_module(module), function)(conn, inherited, checker_pid, warm_up)


def let_go_of_the_console() -> None:
    """This process holds no end of kata's own output, which a spawned or fork-server process inherits: `kata check
    | cat` ends when kata does, and nothing it prints lands beside kata's verdict. A sandbox child's output goes to
    its capture file once it serves a file; a parallel worker and the fork server write nothing themselves."""
    try:
        devnull = os.open(os.devnull, os.O_RDWR)
        for fd in (0, 1, 2):
            os.dup2(devnull, fd)
        os.close(devnull)
    except OSError:
        pass


# ----------------------------------------------------------------------------- ending processes


def kill_tree(pid: int) -> None:
    """Kill a process and everything it started: its descendants (psutil, every system; on Linux the child
    is a subreaper, so a daemon that left its process group is still among them), its process group on
    POSIX, and itself. The descendants are listed first: once the process is gone, its orphans are not."""
    try:
        family = psutil.Process(pid).children(recursive=True)
    except Exception:  # noqa: BLE001 - already gone, or psutil cannot see it
        family = []
    if hasattr(os, "killpg"):  # the child leads its own process group (os.setsid)
        try:
            os.killpg(pid, signal.SIGKILL)
        except OSError:
            pass
    for p in family:
        try:
            p.kill()
        except Exception:  # noqa: BLE001 - gone meanwhile
            pass
    try:
        os.kill(pid, signal.SIGKILL if hasattr(signal, "SIGKILL") else signal.SIGTERM)
    except OSError:
        pass


def adopt_orphans() -> bool:
    """In the child (Linux): become a subreaper, so that a process its user's code started and orphaned
    (a daemon: setsid, then a double fork) stays its descendant, for kill_tree to find. False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        PR_SET_CHILD_SUBREAPER = 36
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def die_with(checker_pid: int) -> None:
    """In the child: end this process and all it started as soon as the checker is gone.

    A thread checks the checker's liveness (every system); Linux adds PR_SET_PDEATHSIG, which acts
    even while the user's code holds the interpreter lock.
    """
    _death_signal()
    try:
        checker = psutil.Process(checker_pid)
    except psutil.NoSuchProcess:
        os._exit(0)

    def alive() -> bool:
        try:
            return checker.is_running() and checker.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    from checker.sandbox import boundary  # here, not in the thread: see _imported_for_launch

    def watch():
        boundary.trust_this_thread()
        while alive():
            threading.Event().wait(PARENT_CHECK_SECONDS)
        end_here()

    threading.Thread(target=watch, name="kata-parent-watch", daemon=True).start()


def end_here() -> None:
    """In the child: end everything it started, then itself. A daemon (setsid, then a double fork) has left the
    process group, but the child is its subreaper on Linux, so it is still among the descendants. Had the child
    just exited, such a daemon would outlive the check, adopted by init, with no parent left to end it."""
    for p in psutil.Process().children(recursive=True):
        try:
            p.kill()
        except psutil.Error:
            pass
    os._exit(0)


def _death_signal(signum=signal.SIGKILL if hasattr(signal, "SIGKILL") else None) -> bool:
    """Linux: the kernel sends signum to this process when its parent dies. False elsewhere."""
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        PR_SET_PDEATHSIG = 1
        return ctypes.CDLL(None, use_errno=True).prctl(PR_SET_PDEATHSIG, signum, 0, 0, 0) == 0
    except (OSError, AttributeError):
        return False


def guard_group() -> int | None:
    """In the child, once it leads its own process group: kill the group when the child dies.

    Linux's death signal kills the child at once when the checker dies, before its own watch could
    end what the user's code started; a small forked guard, told by the same signal, does that.
    Returns the guard's pid (None where there is none).
    """
    if not sys.platform.startswith("linux"):
        return None  # elsewhere the child's watch (die_with) ends its descendants itself
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)  # fork with threads: the guard runs no Python of theirs
        child = os.getpid()
        guard = os.fork()
        if guard:
            return guard
    try:
        signal.signal(signal.SIGTERM, lambda *_: os.killpg(0, signal.SIGKILL))
        if not _death_signal(signal.SIGTERM):
            os._exit(0)
        if os.getppid() != child:  # the child died before the signal was set
            os.killpg(0, signal.SIGKILL)
        while True:
            signal.pause()
    finally:
        os._exit(0)


# ----------------------------------------------------------------------------- memory


def cap_memory(gigabytes: float) -> bool:
    """In the child: cap the address space at what it uses now plus gigabytes (RLIMIT_AS).

    Only Linux enforces RLIMIT_AS (Darwin accepts and ignores it; Windows has no `resource`);
    elsewhere this returns False and the checker watches the child's memory instead (memory_used).
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        import resource
    except ImportError:
        return False
    limit = memory_used(os.getpid()) + int(gigabytes * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
    return True


def cap_files(megabytes: int) -> bool:
    """In the child: no file it writes grows past megabytes (RLIMIT_FSIZE, Linux and macOS); a write past it
    raises OSError (EFBIG) in the user's code instead of the signal that would kill the child. Windows has
    no such limit: there the boundary's refusal of writes in the workspace is what holds."""
    try:
        import resource
    except ImportError:
        return False
    if hasattr(signal, "SIGXFSZ"):
        signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
    limit = megabytes * 2**20
    resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
    return True


def alive(pid: int) -> bool:
    """Whether a process with this pid runs (a zombie does not)."""
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def memory_used(pid: int) -> int:
    """Bytes of memory a process has reserved (virtual size; on Windows, its private commit)."""
    return psutil.Process(pid).memory_info().vms
