"""`kata check` of several katas on every core: one checker process (a worker) per job, each with its own
sandbox child, the results handed back in the order asked.

Each worker runs engine.check_file as a single `kata check` would, so a verdict is the one -j 1 gives; only
the parent (the `kata` command) records the history and draws the report, in catalogue order. Workers are
started the way the sandbox's children are (checker.sandbox.processes: fork, forkserver or spawn), run by name
(run_worker), never a closure:
  fork        forked from `kata` once it has imported the engine (torch): ready at once.
  forkserver  forked from the fork server, which preloaded torch; a worker asks the same server for its
              sandbox children (share_fork_server) instead of starting a server of its own.
  spawn       a fresh interpreter that imports torch; its sandbox children are spawned and recycled as a
              single check's are.
Ctrl-C (or kata's end, however it comes) ends every worker and what it started.
"""

from __future__ import annotations

import os
import pickle
import traceback
from pathlib import Path

from checker.sandbox import processes
from checker.lang import Message, speak, spoken, t

# A worker needs about this much free memory (torch in it and in its sandbox child, and the check's tensors):
# the default number of jobs stays under what the machine has free.
MEMORY_PER_JOB = 2**30


def default_jobs() -> int:
    """The number of cores this process may use, at most one job per GiB of free memory."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # macOS, Windows
        cores = os.cpu_count() or 1
    try:
        import psutil

        cores = min(cores, max(1, psutil.virtual_memory().available // MEMORY_PER_JOB))
    except Exception:  # noqa: BLE001 - the memory cannot be read: one job per core
        pass
    return max(1, cores)


def check_all(work: list[tuple[str, Path]], jobs: int, options: dict, notice=None):
    """Check each (kata id, path) of work on up to `jobs` workers; yield the KataResults in work's order,
    each as soon as it and every one before it are done. options: check_file's keywords.

    A worker that ends without its result (killed, out of memory, a fault of kata's own in it) costs nothing
    but time: the kata it was checking, and any left when no worker is, are checked in this process as -j 1
    checks them, and notice (a callable, if given) is told which, and why where the worker could say."""
    import multiprocessing
    from multiprocessing.connection import wait

    method = processes.start_method()
    if method == "fork":
        from checker import engine  # noqa: F401 - imported once here, inherited by every worker
    ctx = multiprocessing.get_context(method)
    if method == "forkserver":
        ctx.set_forkserver_preload(["checker.sandbox.preload"])
    workers = []  # (process, pipe)
    try:
        for _ in range(max(1, min(jobs, len(work)))):
            ours, theirs = ctx.Pipe()
            proc = ctx.Process(target=run_worker, name="kata-worker",
                               args=(theirs, ours if method == "fork" else None, os.getpid(), spoken(), options))
            proc.start()
            theirs.close()
            workers.append((proc, ours))
        pending = iter(enumerate(work))
        busy: dict = {}  # pipe -> (process, index of the kata it checks)
        for proc, pipe in workers:
            _give(pipe, proc, next(pending, None), busy)
        done: dict = {}  # index -> result, until every kata before it is done
        here: set = set()  # indices of katas to check in this process: their worker ended without a result
        shown = 0
        while shown < len(work):
            if shown in done:
                yield done.pop(shown)
                shown += 1
                continue
            if not busy:  # no worker left: what none took is checked here too
                here.update(index for index, _ in pending)
            if shown in here:
                done[shown] = _check_here(*work[shown], options)
                continue
            for pipe in wait(list(busy)):
                proc, index = busy.pop(pipe)
                try:
                    outcome, value = pickle.loads(pipe.recv_bytes())
                except (EOFError, OSError, pickle.UnpicklingError):  # gone, or gone while it sent its result
                    outcome, value = "ended", None
                if outcome == "error":  # a bug of kata's own in that worker: as it would be with -j 1
                    raise RuntimeError(value)
                if outcome == "ended":
                    here.add(index)
                    if notice is not None:
                        notice(_ended(work[index][0], proc, value))
                    continue
                done[index] = value
                _give(pipe, proc, next(pending, None), busy)
    finally:
        _end(workers)


def _check_here(kata_id: str, path, options: dict):
    from checker import catalogue, engine

    return engine.check_file(catalogue.find(kata_id), Path(path), **options)


def _ended(kata_id: str, proc, why) -> Message:
    """What to say of a worker that ended without its result: the kata and the worker's exit status, and the last
    line of what ended it where the worker could send that (why)."""
    if why:
        return t("a process of kata's that checks katas in parallel stopped while checking {kata} ({why}); kata "
                 "checked it itself", kata=kata_id, why=why.strip().splitlines()[-1])
    return t("a process of kata's that checks katas in parallel ended while checking {kata} (exit status {code}); "
             "kata checked it itself", kata=kata_id, code=_exit_code(proc))


def _give(pipe, proc, job, busy: dict) -> None:
    """The next kata to a worker that is free, or None: it has no more to do and ends."""
    pipe.send_bytes(pickle.dumps(job and (job[0], job[1][0], str(job[1][1]))))
    if job is not None:
        busy[pipe] = (proc, job[0])


def _exit_code(proc) -> object:
    proc.join(1)
    return proc.exitcode


def _end(workers) -> None:
    """Every worker and everything it started, ended: those told they are done exit by themselves; any still
    running (Ctrl-C, an error) is killed with its sandbox children."""
    for proc, pipe in workers:
        proc.join(0.5 if proc.exitcode is None else 0)
    for proc, pipe in workers:
        if proc.exitcode is None:
            processes.kill_tree(proc.pid)
        proc.join(5)
        pipe.close()


# ----------------------------------------------------------------------------- the worker


def run_worker(conn, inherited, checker_pid: int, lang: str, options: dict) -> None:
    """A worker: check each kata the checker sends, send its result back; end at None, at Ctrl-C, or when the
    checker is gone. Imported by name under every start method."""
    try:
        _on_its_own()
        if inherited is not None:
            inherited.close()  # the checker's end (fork): once it is gone, recv() sees EOF
        processes.die_with(checker_pid)  # kata killed: this worker and its sandbox children end with it
        speak(lang)
        share_fork_server()
        processes.prestart(keep=True)  # spawn, forkserver: the next sandbox child starts while this one works
        from checker import catalogue, engine

        while True:
            job = pickle.loads(conn.recv_bytes())
            if job is None:
                break
            index, kata_id, path = job
            try:
                result = engine.check_file(catalogue.find(kata_id), Path(path), **options)
                reply = ("ok", result)
            except Exception:  # noqa: BLE001 - a bug of kata's: the checker reports it as an internal error
                reply = ("error", traceback.format_exc())
            conn.send_bytes(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))
    except EOFError:  # the checker gone
        pass
    except BaseException:  # noqa: BLE001 - Ctrl-C, a fault: the checker is told, checks that kata itself, says why
        try:
            conn.send_bytes(pickle.dumps(("ended", traceback.format_exc())))
        except Exception:  # noqa: BLE001 - the checker gone too
            pass
    finally:
        _flush_and_exit()


def _on_its_own() -> None:
    """A process group of its own, and no end of the terminal: Ctrl-C reaches `kata` alone, which ends every
    worker with all it started (a worker interrupted midway, or a sandbox child it was starting, would print
    a traceback); a worker writes nothing itself (what goes wrong is sent back), so `kata check --all | cat`
    ends when kata does."""
    if hasattr(os, "setsid"):
        try:
            os.setsid()
        except OSError:
            pass
    processes.let_go_of_the_console()


def _flush_and_exit() -> None:
    """Exit now, without torch's teardown or multiprocessing's joins: the worker's sandbox children end with
    it (they watch it), and everything it had to say was sent."""
    os._exit(0)


def share_fork_server() -> None:
    """Under forkserver, a worker forked by the server asks that same server for its sandbox children.

    multiprocessing starts a new server in any process that did not start one itself (another torch import,
    seconds per worker), although a process the server forked knows the server's address and holds the
    descriptor that keeps it alive. Elsewhere, or where multiprocessing is built otherwise, nothing changes.
    """
    if processes.start_method() != "forkserver":
        return
    try:
        from multiprocessing import forkserver, resource_tracker

        server = forkserver._forkserver
        if server._forkserver_pid is None and server._forkserver_address and server._forkserver_alive_fd is not None:
            server.ensure_running = resource_tracker.ensure_running
    except Exception:  # noqa: BLE001 - another Python: this worker starts a server of its own
        pass
