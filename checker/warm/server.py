"""The resident checker of one workspace: `python -m checker.warm.server WORKSPACE [--after PID]`.

`kata check` starts it in the background when none runs (checker.warm.client.start), `kata server start` too. It
imports torch, NumPy, the engine and the meta kernels once (engine.warm_up), then checks what clients send, one
request after another, each exactly as a cold `kata check` does: engine.check_file, whose sandbox child is forked
from this process, handed by its fork server, or spawned, as the start method says. It sends each KataResult back
with its messages frozen in both languages (client.frozen); the client draws the report and records the history.

It exits after IDLE_MINUTES without a request; when the installed package changes (its version, or the time or
size of any of its files: compared before each request, and each minute); when its workspace is deleted; when
another server has taken its place; and at `kata server stop`. The user's code runs in the sandbox's child: its
crash or its hang is a verdict, never this process's end.
"""

from __future__ import annotations

import hashlib
import json
import os
import pickle
import queue
import sys
import threading
import time
import traceback
from pathlib import Path

from checker import __version__
from checker.warm import client

WATCH_SECONDS = 1.0  # how often the server looks at its workspace, its socket and the clock
FINGERPRINT_SECONDS = 60.0  # how often, when idle, it compares the package's files


def fingerprint(root: Path | None = None) -> str:
    """The installed package (or root) as it is now: its version, and each file's path, modification time and
    size (compiled files aside)."""
    import checker

    digest = hashlib.sha256(__version__.encode())
    _add_files(root or Path(checker.__file__).resolve().parent, "", digest)
    return digest.hexdigest()


def _add_files(folder, prefix: str, digest) -> None:
    try:
        entries = sorted(os.scandir(folder), key=lambda entry: entry.name)
    except OSError:
        return
    for entry in entries:
        try:
            if entry.is_dir(follow_symlinks=False):
                if entry.name != "__pycache__":
                    _add_files(entry.path, f"{prefix}{entry.name}/", digest)
                continue
            st = entry.stat()
        except OSError:  # gone meanwhile
            continue
        digest.update(f"{prefix}{entry.name}\0{st.st_mtime_ns}\0{st.st_size}\n".encode("utf-8", "surrogateescape"))


class Server:
    """One workspace's checker: a listener, a thread that accepts (and authenticates) connections, a watch, and
    the main thread that serves one connection at a time."""

    def __init__(self, ws: Path, lock_fd: int):
        from checker import engine  # torch, NumPy and the meta kernels: once, here
        from checker.sandbox import processes

        engine.warm_up()
        processes.prestart(keep=True)  # spawn, forkserver: the next sandbox child starts while one is used
        self.engine = engine
        self.ws, self.place, self.lock_fd = ws, client.place(ws), lock_fd
        self.identity, self.fingerprint = client.identity(), fingerprint()
        self.started = self.last = time.monotonic()
        self.busy, self.served = False, 0
        self.pending: queue.Queue = queue.Queue()
        self.listener = self._listen()

    def _listen(self):
        from multiprocessing.connection import Listener

        key = os.urandom(32)
        fd = os.open(self.place.key.with_suffix(".new"), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "wb") as out:
            out.write(key)
        if self.place.family == "AF_UNIX":
            client.private_folder(Path(self.place.address).parent)
            try:
                os.unlink(self.place.address)  # a server that was killed left it; the lock says none runs now
            except FileNotFoundError:
                pass
        mask = os.umask(0o077)  # the socket is made readable and writable by its owner only (0600)
        try:
            listener = Listener(self.place.address, self.place.family, backlog=64, authkey=key)
        finally:
            os.umask(mask)
        if self.place.family == "AF_UNIX":
            os.chmod(self.place.address, 0o600)
        os.replace(self.place.key.with_suffix(".new"), self.place.key)
        self.key = key
        self.socket_id = _file_id(self.place.address)
        info = {"pid": os.getpid(), "workspace": str(self.ws), "address": self.place.address,
                "python": sys.executable, "version": __version__}
        fd = os.open(self.place.info, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w", encoding="utf-8") as out:
            json.dump(info, out)
        return listener

    # ------------------------------------------------------------------------- the threads

    def run(self) -> None:
        threading.Thread(target=self._accept, name="kata-server-accept", daemon=True).start()
        threading.Thread(target=self._watch, name="kata-server-watch", daemon=True).start()
        while True:
            conn = self.pending.get()
            self.busy = True
            try:
                self._serve(conn)
            finally:
                try:
                    conn.close()
                except OSError:
                    pass
                self.last, self.busy = time.monotonic(), False

    def _accept(self) -> None:
        """Every connection that knows the key, queued; one that does not is refused (accept raises)."""
        from multiprocessing.connection import AuthenticationError

        while True:
            try:
                self.pending.put(self.listener.accept())
            except (AuthenticationError, EOFError, OSError, ValueError):
                continue

    def _watch(self) -> None:
        compared = time.monotonic()
        while True:
            time.sleep(WATCH_SECONDS)
            if not (self.ws / client.MARKER).is_dir():
                self.quit()
            if not self._ours():
                self.quit(tidy=False)  # another server took the workspace: its files are its own
            idle = not self.busy and self.pending.empty()
            if idle and time.monotonic() - self.last > client.IDLE_MINUTES * 60:
                self.quit()
            if idle and time.monotonic() - compared > FINGERPRINT_SECONDS:
                compared = time.monotonic()
                if fingerprint() != self.fingerprint:
                    self.quit()

    def _ours(self) -> bool:
        try:
            return self.place.key.read_bytes() == self.key and _file_id(self.place.address) == self.socket_id
        except OSError:
            return False

    def quit(self, tidy: bool = True) -> None:
        """Exit now: the socket, the key and info.json removed (when still this server's), the lock let go. The
        sandbox children die with this process (they watch it)."""
        if tidy:
            mine = [self.place.address] if self.socket_id and _file_id(self.place.address) == self.socket_id else []
            try:
                mine += [self.place.info, self.place.key] if self.place.key.read_bytes() == self.key else []
            except OSError:
                pass
            for path in mine:
                try:
                    os.unlink(path)
                except OSError:
                    pass
        client.release(self.lock_fd)
        for stream in (sys.stdout, sys.stderr):
            try:
                stream.flush()
            except OSError:
                pass
        os._exit(0)

    # ------------------------------------------------------------------------- one connection

    def _serve(self, conn) -> None:
        try:
            request = pickle.loads(conn.recv_bytes())  # from a process that holds the key: the owner's
        except (EOFError, OSError, pickle.UnpicklingError):
            return
        op = request.get("op") if isinstance(request, dict) else None
        if op == "status":
            now = time.monotonic()
            self._send(conn, ("status", {"pid": os.getpid(), "workspace": str(self.ws), "served": self.served,
                                         "up_seconds": now - self.started, "idle_seconds": now - self.last,
                                         "python": sys.executable}))
        elif op == "stop":
            self._send(conn, ("stopping", os.getpid()))
            self.quit()
        elif op == "check":
            why = self._stale(request.get("identity"))
            if why:
                self.quit_after(conn, why)  # exits
            self._check(conn, request)

    def _stale(self, theirs) -> str:
        """Why this server may not check for this client: another Python, package or start method, or the
        package changed since the server started; '' when it may."""
        if theirs != self.identity:
            return "identity"
        if fingerprint() != self.fingerprint:
            return "changed"
        return ""

    def quit_after(self, conn, why: str) -> None:
        """Tell the client this server is stale, having let go of the lock first (so that the client can start a
        new one at once), and exit."""
        client.release(self.lock_fd)
        self.lock_fd = os.open(os.devnull, os.O_RDONLY)  # quit() closes it
        self._send(conn, ("stale", why))
        self.quit()

    def _check(self, conn, request: dict) -> None:
        from checker import catalogue
        from checker.lang import speaking

        try:
            os.chdir(request["cwd"])  # a relative path, and the user's code, see what a cold check sees
        except OSError:
            self._send(conn, ("error", "cwd"))  # the client checks cold, where it is
            return
        with speaking(request["lang"]):
            for kata_id, path in request["jobs"]:
                try:
                    result = self.engine.check_file(catalogue.find(kata_id), Path(path), **request["options"])
                    reply = ("result", client.frozen(result))
                except Exception:  # noqa: BLE001 - a bug of kata's: the client checks cold, and says it there
                    reply = ("error", traceback.format_exc())
                self.served += 1
                if not self._send(conn, reply) or reply[0] != "result":
                    break
        os.chdir(self.ws)

    @staticmethod
    def _send(conn, reply) -> bool:
        try:
            conn.send_bytes(client.dumps(reply))
            return True
        except (OSError, EOFError):  # the client left (Ctrl-C): the next one is served all the same
            return False


def _file_id(path: str) -> tuple | None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):  # a named pipe has no file to look at
        return None
    return st.st_dev, st.st_ino


def wait_for(pid: int, seconds: float = 60.0) -> None:
    """Until process pid has ended (at most seconds): the cold check that started this server runs first."""
    from checker.sandbox import processes

    deadline = time.monotonic() + seconds
    while processes.alive(pid) and time.monotonic() < deadline:
        time.sleep(0.05)


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    ws = Path(argv[0]).resolve()
    after = int(argv[argv.index("--after") + 1]) if "--after" in argv else None
    where = client.place(ws)
    client.private_folder(where.folder)
    lock_fd = client.hold(where.lock)
    if lock_fd is None:
        return 0  # another server is starting or runs for this workspace
    if after:
        wait_for(after)
    from checker.sandbox import child  # torch: only once the cold check that started this server is done

    child.PARENT_ONLY.add(lock_fd)  # a sandbox child outliving a killed server must not hold its lock
    os.chdir(ws)
    Server(ws, lock_fd).run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
