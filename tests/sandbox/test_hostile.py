"""Hostile or broken user code never breaks `kata` or turns its verdict green (real CLI)."""

import sqlite3
import stat
from pathlib import Path

import pytest

from conftest import ROOT, run_json, run_kata

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
HOOK = "        d_k = Q.size(-1)"


def _check(ws, source, *extra):
    (ws / "torch" / "attention.py").write_text(source, encoding="utf-8")
    proc, doc = run_json("check", "attention", "--workspace", ws, *extra)
    return proc, doc["katas"][0]


def _inject(line: str) -> str:
    """The reference with one line of hostile code at the top of forward."""
    return SOLUTION.replace(HOOK, f"        {line}\n{HOOK}")


def _messages(kata) -> str:
    return "\n".join([kata["error"]] + [c["message"] for c in kata["checks"]])


# What a returned value of the wrong kind gives is the verdict's business more than the sandbox's: slow tier.
_RETURNED = pytest.mark.slow


@pytest.mark.parametrize("line, expect", [
    ("import sys; sys.exit(0)", "sys.exit(0)"),
    ("raise KeyboardInterrupt", "KeyboardInterrupt"),
    ("input()", "EOFError"),
    pytest.param("return None", "got None", marks=_RETURNED),
    pytest.param("return {\"out\": Q}", "got a dict", marks=_RETURNED),
    pytest.param("return Q.numpy(), K.numpy()", "NumPy array", marks=_RETURNED),
    pytest.param("import numpy; return numpy.float64(1.0), Q", "got a float64",  # a float subclass: once an internal error
                 marks=_RETURNED),
    pytest.param("return type('Half', (float,), {})(0.5), Q", "got a Half", marks=_RETURNED),
    pytest.param("return (Q @ K.transpose(-2, -1)).softmax(-1) @ V * float('nan'), (Q @ K.transpose(-2, -1)).softmax(-1)",
                 "elements are NaN", marks=_RETURNED),  # the right shape, every value NaN
    ("import ctypes; ctypes.string_at(0)", "through ctypes"),
    ("import os; os.abort()", "SIGABRT"),
    ("torch.zeros(200_000, 200_000)", "GB of memory"),
])
def test_broken_call_is_a_clear_verdict_not_a_pass(workspace, line, expect):
    proc, kata = _check(workspace, _inject(line))
    assert proc.returncode == 1
    assert kata["status"] in ("fail", "error")
    assert expect in _messages(kata)


@pytest.mark.parametrize("top, status, expect", [
    ("import sys\nsys.exit(0)\n", "error", "sys.exit(0)"),
    ("while True:\n    pass\n", "timeout", "timed out"),
    ("import no_such_module_here\n", "error", "No module named 'no_such_module_here'"),
    ("x = (\n", "error", "SyntaxError"),
])
def test_broken_import_is_a_clear_verdict(workspace, top, status, expect):
    proc, kata = _check(workspace, top + SOLUTION, "--timeout", "2")
    assert proc.returncode == 1 and kata["status"] == status
    assert expect in kata["error"]


def test_patched_libraries_cannot_make_a_wrong_answer_pass(workspace):
    patches = "\n".join([
        "import torch.testing, numpy.testing",
        "torch.testing.assert_close = lambda *a, **k: None",
        "numpy.testing.assert_allclose = lambda *a, **k: None",
        "torch.allclose = lambda *a, **k: True",
        "torch.equal = lambda *a, **k: True",
        "torch.Tensor.__eq__ = lambda *a, **k: True",
        "torch.set_default_dtype(torch.float32)",
        "torch.manual_seed(123)",
        "torch.set_num_threads(2)",
    ])
    wrong = SOLUTION.replace("/ math.sqrt(d_k)", "")
    proc, kata = _check(workspace, patches + "\n" + wrong)
    assert proc.returncode == 1 and kata["status"] == "fail"
    assert "√d_k" in kata["diagnosis"]


def test_megabytes_of_output_are_captured_and_cut(workspace):
    proc, kata = _check(workspace, _inject("print('x' * 3_000_000)"))
    assert proc.returncode == 0, _messages(kata)
    assert len(kata["output"]) < 10_000 and "more bytes not shown" in kata["output"]
    assert len(proc.stdout) < 200_000


def test_spawned_processes_do_not_outlive_the_check(workspace, tmp_path):
    marker = tmp_path / "alive"
    code = f"import time, pathlib; time.sleep(3); pathlib.Path({str(marker)!r}).write_text('x')"
    line = f"import subprocess, sys; subprocess.Popen([sys.executable, '-c', {code!r}])"
    proc, kata = _check(workspace, _inject(line))
    assert kata["status"] == "fail" and "tried to start a process (subprocess.Popen)" in _messages(kata)
    # Only a process running that code could write the marker: none is alive and none wrote it (no 4 s wait for a
    # process that the sandbox never started; one that was started and survived is alive now, or wrote it).
    import psutil

    def running_the_code(pid):
        try:
            return str(marker) in " ".join(psutil.Process(pid).cmdline())
        except psutil.Error:
            return False

    assert not any(running_the_code(pid) for pid in psutil.pids()), "a process started by the user's code survived"
    assert not marker.exists(), "a process started by the user's code survived the check"


def test_empty_file_names_what_is_missing(workspace):
    proc, kata = _check(workspace, "")
    assert kata["status"] == "fail" and "'ScaledDotProductAttention' is missing" in _messages(kata)


def test_wrong_signature_is_named(workspace):
    proc, kata = _check(workspace, SOLUTION.replace("def forward(self, Q: Tensor, K: Tensor, V: Tensor,",
                                                    "def forward(self, K: Tensor, Q: Tensor, V: Tensor,"))
    assert kata["status"] == "fail" and "should take (Q, K, V, mask)" in _messages(kata)


def test_non_utf8_file_is_reported(workspace):
    (workspace / "torch" / "attention.py").write_bytes(b"x = '\xff\xfe'\n")
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 1 and doc["katas"][0]["status"] == "error"
    assert "utf-8" in doc["katas"][0]["error"]


def test_deleted_file_is_reported_and_init_restores_it(workspace):
    (workspace / "torch" / "attention.py").unlink()
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 1 and "does not exist" in doc["katas"][0]["error"]
    run_kata("init", workspace)
    assert (workspace / "torch" / "attention.py").is_file()


def test_corrupt_progress_database_is_reported_and_kept(workspace):
    db = workspace / ".kata" / "progress.db"
    db.write_bytes(b"this is not a database" * 100)
    before = db.read_bytes()
    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    proc = run_kata("check", "attention", "--workspace", workspace)
    assert proc.returncode == 0, "the verdict still stands"
    assert "progress database" in proc.stderr
    assert db.read_bytes() == before, "the user's history is never recreated over"
    assert run_kata("list", "--workspace", workspace).returncode == 0


def test_locked_database_waits_then_records(workspace):
    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    run_kata("check", "attention", "--workspace", workspace)  # creates the database
    db = sqlite3.connect(workspace / ".kata" / "progress.db", check_same_thread=False)
    db.execute("BEGIN IMMEDIATE")  # hold the write lock briefly from another process
    import threading

    threading.Timer(1.0, db.rollback).start()
    proc = run_kata("check", "attention", "--workspace", workspace)
    assert proc.returncode == 0 and "progress database" not in proc.stderr
    count = sqlite3.connect(workspace / ".kata" / "progress.db").execute("SELECT COUNT(*) FROM checks").fetchone()
    assert count[0] == 2


def test_read_only_workspace_still_gives_a_verdict(workspace):
    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    db_dir = workspace / ".kata"
    for f in db_dir.iterdir():
        f.unlink()
    db_dir.chmod(stat.S_IRUSR | stat.S_IXUSR)
    try:
        proc = run_kata("check", "attention", "--workspace", workspace)
    finally:
        db_dir.chmod(stat.S_IRWXU)
    assert proc.returncode == 0
    if proc.stderr:  # root can write anyway; anyone else is told why nothing was recorded
        assert "read-only" in proc.stderr


def test_init_into_a_file_is_a_usage_error(tmp_path):
    target = tmp_path / "file"
    target.write_text("x")
    proc = run_kata("init", target)
    assert proc.returncode == 2 and "not a folder" in proc.stderr


def test_concurrent_checks_lose_no_record(workspace):
    import subprocess
    import sys

    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    run_kata("check", "attention", "--workspace", workspace)  # the database exists before the race
    procs = [subprocess.Popen([sys.executable, "-m", "checker", "check", "attention", "--workspace", str(workspace)],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True) for _ in range(4)]
    assert all(p.wait(timeout=300) == 0 for p in procs)
    assert not any("progress database" in p.stderr.read() for p in procs)
    db = sqlite3.connect(workspace / ".kata" / "progress.db")
    assert db.execute("SELECT COUNT(*) FROM checks").fetchone()[0] == 5


def test_a_check_killed_midway_leaves_the_database_readable(workspace):
    import signal
    import subprocess
    import sys
    import time

    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    run_kata("check", "attention", "--workspace", workspace)
    for delay in (0.5, 1.5, 3.0):  # before, during and around the write
        proc = subprocess.Popen([sys.executable, "-m", "checker", "check", "--all", "--workspace", str(workspace)],
                                stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(delay)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    db = sqlite3.connect(workspace / ".kata" / "progress.db")
    assert db.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
    proc, doc = run_json("list", "--workspace", workspace)
    assert proc.returncode == 0
    assert {k["name"]: k["status"] for k in doc["katas"]}["attention"] == "pass"


def test_a_forked_child_keeps_no_socket_but_its_own_line_to_the_checker():
    """A resident server's socket and its client's connection, or another check's pipe under -j, are inherited by a
    forked child: the child closes every socket but its own before it runs the user's code."""
    import os
    import socket

    from checker.sandbox.child import close_inherited

    mine, theirs, listening = *socket.socketpair(), socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    read, write = os.pipe()  # not a socket: left alone
    pid = os.fork()
    if pid == 0:  # the child: close, then say which are still open
        close_inherited(mine.fileno())
        alive = []
        for fd in (mine.fileno(), theirs.fileno(), listening.fileno(), read):
            try:
                os.fstat(fd)
                alive.append(fd)
            except OSError:
                pass
        os.write(write, repr(alive).encode())
        os._exit(0)
    os.waitpid(pid, 0)
    assert eval(os.read(read, 100)) == [mine.fileno(), read]  # noqa: S307 - our own child's repr of a list of ints
    for s in (mine, theirs, listening):
        s.close()
