"""The sandbox's parent: the checker's side of one child process serving one user file (Sandbox)."""

from __future__ import annotations

import os
import pickle
import signal
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

from checker.errors import Crashed, ReturnedOther, Timeout, UserError
from checker.lang import spoken, t
from checker.sandbox import processes
from checker.sandbox.child import _memory_message
from checker.sandbox.wire import decode, safe_loads

# Memory the user's code may allocate on top of what the child holds after importing torch.
DEFAULT_MEMORY_GB = 4.0
# Captured output of the user's code kept for the report.
MAX_OUTPUT_CHARS = 4_000
# Where the system does not cap the child's memory, the checker looks at it this often.
MEMORY_CHECK_SECONDS = 0.05
# A child still importing torch (spawn) may take this long to become ready; no user code runs yet.
READY_SECONDS = 300
# A released child says within this time whether it can serve another file; else it is ended.
RELEASE_SECONDS = 2



def returned_other(err: UserError) -> str | None:
    """The sentence for a ReturnedOther the child reported, or None for an error the user's code raised."""
    if err.kind != ReturnedOther.__name__:
        return None
    expected, got = map(int, err.message.split())
    return t("the gradient check follows {expected} floating-point output(s) and your code returned {got}: return "
             "every output the contract lists, each a float tensor", expected=expected, got=got)



CAPTURE_PREFIX = "kata-output-"  # then the checker's pid: what a killed checker left is found and removed
_swept = False


def _sweep_captures() -> None:
    """Once per process: remove the captured output that checkers killed midway left in the temporary folder."""
    global _swept
    if _swept:
        return
    _swept = True
    folder = tempfile.gettempdir()
    try:
        names = [n for n in os.listdir(folder) if n.startswith(CAPTURE_PREFIX)]
    except OSError:
        return
    for name in names:
        pid, path = name[len(CAPTURE_PREFIX):].partition("-")[0], os.path.join(folder, name)
        try:
            if not processes.alive(int(pid)) if pid.isdigit() else time.time() - os.path.getmtime(path) > 86400:
                os.unlink(path)  # a name without a pid: an earlier version's, a day old
        except OSError:
            pass


class Kept(NamedTuple):
    """Weights the checker sends a child once and then names by key: a case's reference weights, which never change
    (checker.kit.proxy.Kit.state)."""

    key: tuple
    weights: dict


class Sandbox:
    """One child process serving one user file. Use as a context manager."""

    def __init__(self, path: Path, timeout: float, memory_gb: float = DEFAULT_MEMORY_GB, warm: bool = False):
        """warm: the checks will run the user's code on the meta device; the child gets ready for it."""
        self.path = Path(path).resolve()
        self.warm = warm
        self.timeout = timeout
        self.memory_gb = memory_gb
        _sweep_captures()
        fd, self._capture_path = tempfile.mkstemp(prefix=f"{CAPTURE_PREFIX}{os.getpid()}-")
        self._capture = os.fdopen(fd, "rb")
        self._proc, self._conn = processes.take()
        self._ready = False
        self._memory_limit = None  # bytes, where the checker itself watches the child's memory
        self._ended = ""  # why the child was stopped, for every later request
        self._settled = []  # the requests that set the child up (traps, the import): replayed in a new one
        self._kept: set = set()  # the keys of the Kept weights this child holds (_kept_state)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        if not self._release():
            self.close()
        self._capture.close()
        try:
            os.unlink(self._capture_path)
        except OSError:
            pass

    def _release(self) -> bool:
        """Under spawn, hand a child that comes back clean to the next file instead of ending it."""
        if not (processes.recycles() and self._ready and not self._ended and self._proc.is_alive()):
            return False
        try:
            self._send({"op": "release"})
            if not self._conn.poll(RELEASE_SECONDS) or not self._receive().get("reusable"):
                return False
        except (Crashed, OSError, EOFError, pickle.UnpicklingError):
            return False
        processes.recycle((self._proc, self._conn))
        return True

    def _setup(self) -> None:
        """Tell the child which file it serves; it may still be importing torch (spawn)."""
        self._ready = True
        self._kept = set()  # a new child, or one serving a new file, holds no weights yet
        self._send({"op": "setup", "path": str(self.path), "capture": self._capture_path, "memory_gb": self.memory_gb,
                    "warm": self.warm, "lang": spoken(), "recycle": processes.recycles()})
        if not self._conn.poll(READY_SECONDS):
            self.close()
            raise Crashed(t("the process that runs your code did not start"))
        reply = self._receive()
        if not reply["capped"]:
            self._memory_limit = reply["baseline"] + int(self.memory_gb * 2**30)

    def _kept_state(self, state):
        """A Kept state is sent as ("kept", key, weights) the first time this child gets it, and as ("kept", key, None)
        after: a check calls the user's module with one case's weights dozens of times, and pickling them each time
        was a tenth of a layer's check. Any other state (a check's own edited weights) is sent as it is."""
        if not isinstance(state, Kept):
            return state
        if state.key in self._kept:
            return ("kept", state.key, None)
        self._kept.add(state.key)
        return ("kept", state.key, state.weights)

    def _send(self, req: dict) -> None:
        try:
            # Plain pickle copies tensors by value; Connection.send would share their memory
            # (torch registers shared-memory reductions), letting the user's code write into ours.
            self._conn.send_bytes(pickle.dumps(req, protocol=pickle.HIGHEST_PROTOCOL))
        except (BrokenPipeError, OSError):
            raise Crashed(self._death()) from None

    def _receive(self) -> dict:
        try:
            raw = self._conn.recv_bytes()
        except (EOFError, OSError):
            raise Crashed(self._death()) from None
        return safe_loads(raw)

    def _answered(self) -> bool:
        """Wait up to the time limit for a reply; where the system caps no memory, watch the child's."""
        if self._memory_limit is None:
            return self._conn.poll(self.timeout)
        deadline = time.monotonic() + self.timeout
        while not self._conn.poll(min(MEMORY_CHECK_SECONDS, max(0.0, deadline - time.monotonic()))):
            if time.monotonic() >= deadline:
                return False
            try:
                used = processes.memory_used(self._proc.pid)
            except Exception:  # noqa: BLE001 - gone: the next poll sees the pipe closed
                continue
            if used > self._memory_limit:
                # As a system that caps the memory would: this call raises MemoryError and the next one runs,
                # in a new child set up as this one was (where the cap is the system's, the child lives on).
                self.close()
                self._proc, self._conn = processes.take()
                self._ready = False
                raise UserError("MemoryError", _memory_message(self.memory_gb), "")
        return True

    def request(self, op: str, **req):
        """Send one request; return the decoded reply or raise UserError / Timeout / Crashed."""
        if self._ended:
            raise Crashed(self._ended)
        if not self._ready:
            self._setup()
            for settled in self._settled:  # a new child after the last one was stopped for its memory
                self._send(settled)
                if not self._answered() or not self._receive()["ok"]:
                    self.close()
                    self._ended = t("the process that runs your code did not start")
                    raise Crashed(self._ended)
        if req.get("state") is not None:
            req = {**req, "state": self._kept_state(req["state"])}
        self._send({"op": op, **req})
        if not self._answered():
            self.close()
            self._ended = t("timed out after {seconds:g} s", seconds=self.timeout)
            raise Timeout(self._ended)
        reply = self._receive()
        if reply["ok"] and op in ("trap", "load"):
            self._settled.append({"op": op, **req})
        if not reply.pop("ok"):
            error = reply["error"]
            if error["kind"] == "MemoryError":  # said again here, in the language spoken (the child may not know it)
                error = {**error, "message": _memory_message(self.memory_gb)}
            english, values = error.pop("said", None) or (None, None)
            if english is not None:  # kata's own sentence: a message, drawn in the reader's language
                error["message"] = t(english, **values)
            raise UserError(**error)
        for key in ("value", "args_after"):
            if key in reply:
                reply[key] = decode(reply[key])
        return reply

    def _death(self) -> str:
        self._proc.join(2)
        code = self._proc.exitcode
        if code is None:
            return t("the process running your code stopped answering")
        if code < 0:
            name = signal.Signals(-code).name if -code in signal.Signals._value2member_map_ else str(-code)
            return t("the process running your code was killed by signal {name}", name=name) + (
                t(" (a segmentation fault)") if name == "SIGSEGV" else "")
        return t("the process running your code exited with status {code} (os._exit or a crash)", code=code)

    def output(self) -> str:
        """What the user's code printed, cut to a readable size."""
        self._capture.seek(0)
        data = self._capture.read(MAX_OUTPUT_CHARS + 1).decode("utf-8", "replace")
        size = os.fstat(self._capture.fileno()).st_size
        if size > MAX_OUTPUT_CHARS:
            data = data[:MAX_OUTPUT_CHARS] + f"\n... ({size - MAX_OUTPUT_CHARS} more bytes not shown)"
        return data

    def close(self) -> None:
        if self._proc.exitcode is None:
            processes.kill_tree(self._proc.pid)
        self._proc.join(5)
        self._conn.close()

