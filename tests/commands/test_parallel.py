"""`kata check` of several katas on every core (-j N): the verdicts, the report's order, the exit status and the
history are those of -j 1, under every start method; Ctrl-C ends every process it started. Every kata's reference
on two cores (`kata check --all -j 2`) is held to the one-at-a-time verdicts in tests/commands/test_server.py,
which checks them all one at a time already."""

import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import _DATA_HOME, ROOT, START_METHODS, run_json, run_kata, variant

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
TIMES = ("seconds", "user_seconds", "reference_seconds")  # the only fields a run may change


def _verdicts(doc) -> list[dict]:
    """Everything --json says of each kata but how long it took."""
    return [{k: v for k, v in kata.items() if k not in TIMES} for kata in doc["katas"]]


def _mixed(ws) -> list[str]:
    """Four katas, not in catalogue order: two passes, a wrong variant and an unwritten stub."""
    (ws / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    (ws / "numpy" / "attention.py").write_text(
        variant("numpy_attention", "wrong_softmax_axis").read_text(encoding="utf-8"), encoding="utf-8")
    (ws / "torch" / "multi_head_attention.py").write_text(
        (ROOT / "solutions" / "torch" / "multi_head_attention.py").read_text(encoding="utf-8"), encoding="utf-8")
    return ["multi_head_attention", "attention", "numpy/attention", "numpy/softmax"]


@pytest.mark.parametrize("method", START_METHODS)
def test_several_katas_on_two_cores_give_the_verdicts_order_and_exit_status_of_one(workspace, method):
    names = _mixed(workspace)
    env = {"KATA_SANDBOX": method}
    one, doc_one = run_json("check", *names, "-j", "1", "--workspace", workspace, env=env)
    two, doc_two = run_json("check", *names, "-j", "2", "--workspace", workspace, env=env)
    assert two.returncode == one.returncode == 1, two.stderr
    assert [k["name"] for k in doc_two["katas"]] == [k["name"] for k in doc_one["katas"]] == names
    assert _verdicts(doc_two) == _verdicts(doc_one)
    assert [k["status"] for k in doc_two["katas"]] == ["pass", "pass", "fail", "not_started"]
    assert two.stderr == one.stderr == ""


def test_the_history_of_a_parallel_check_is_the_history_of_one_check_at_a_time(tmp_path):
    stats = []
    for jobs in ("1", "2"):
        ws = tmp_path / f"ws{jobs}"
        assert run_kata("init", ws).returncode == 0
        names = _mixed(ws)
        run_kata("check", *names, "-j", jobs, "--workspace", ws)
        run_kata("check", *names[:2], "-j", jobs, "--workspace", ws)
        _, doc = run_json("stats", "--workspace", ws)
        stats.append({k["name"]: (k["attempts"], k["passes"]) for k in doc["katas"]})
    assert stats[0] == stats[1]
    assert stats[1]["attention"] == (2, 2) and stats[1]["numpy/attention"] == (1, 0)


def test_passing_katas_exit_0_and_a_bad_job_count_is_a_usage_error_in_both_languages(workspace):
    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    proc = run_kata("check", "attention", "numpy/softmax", "--solution", "-j", "2")
    assert proc.returncode == 0, proc.stderr
    for bad in ("0", "two", "-3"):
        proc = run_kata("check", "--all", "-j", bad, "--workspace", workspace)
        assert proc.returncode == 2 and "-j" in proc.stderr and "whole number" in proc.stderr, proc.stderr
    proc = run_kata("--lang", "zh", "check", "--all", "-j", "0", "--workspace", workspace)
    assert proc.returncode == 2 and "整数" in proc.stderr, proc.stderr
    assert "-j N" in run_kata("check", "--help").stdout


def _family(pid: int) -> list[psutil.Process]:
    try:
        return psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []


@pytest.mark.parametrize("method", START_METHODS)
@pytest.mark.parametrize("to_group", [True, False], ids=["ctrl-c", "sigint-to-kata-only"])
def test_ctrl_c_ends_every_process_a_parallel_check_started(workspace, method, to_group):
    """Ctrl-C reaches the terminal's whole process group; `kill -INT` only kata: either way every worker and
    every sandbox child ends, and kata exits 130."""
    loop = "import time\nwhile True:\n    time.sleep(0.05)\n"  # each kata's import never ends
    for name in ("attention", "softmax"):
        (workspace / "numpy" / f"{name}.py").write_text(loop, encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "XDG_DATA_HOME": _DATA_HOME, "KATA_WORKSPACE": "", "KATA_SANDBOX": method}
    # As at a terminal: a test run started in the background by a script inherits SIGINT ignored, and Python keeps it so
    proc = subprocess.Popen([sys.executable, "-m", "checker", "check", "numpy/attention", "numpy/softmax", "-j", "2",
                             "--timeout", "120", "--workspace", str(workspace)], env=env, start_new_session=True,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    try:
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline:  # two workers, each with a sandbox child running the loop
            family = _family(proc.pid)
            if sum(1 for p in family if _runs_user_code(p)) >= 2:
                break
            time.sleep(0.2)
        else:
            pytest.fail(f"no two sandbox children after 120 s: {[p.cmdline() for p in _family(proc.pid)]}")
        family = _family(proc.pid)
        (os.killpg if to_group else os.kill)(proc.pid, signal.SIGINT)
        try:
            _, err = proc.communicate(timeout=30)
        except subprocess.TimeoutExpired:
            pytest.fail(f"kata still runs 30 s after SIGINT: {_described([psutil.Process(proc.pid), *_family(proc.pid)])}")
        assert proc.returncode == 130, err
        assert "Traceback" not in err, err
        gone, alive = psutil.wait_procs(family, timeout=10)
        assert not alive, [p.cmdline() for p in alive]
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)


def _described(processes) -> list:
    """Each process's pid, state, what the kernel waits on in it, the signals it ignores and catches (masks), and its
    command line: what a failure should show."""
    described = []
    for p in processes:
        try:
            described.append((p.pid, p.status(), _proc(p.pid), " ".join(p.cmdline())[:120]))
        except psutil.Error:
            described.append((p.pid, "gone"))
    return described


def _proc(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/wchan", encoding="ascii") as f:
            waits = f.read()
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            return " ".join([waits, *(line.split()[1] for line in f if line.startswith(("SigIgn", "SigCgt")))])
    except OSError:
        return "?"


def _runs_user_code(p: psutil.Process) -> bool:
    """A sandbox child that has imported the user's file (its capture file is open)."""
    try:
        return any("kata-output-" in f.path for f in p.open_files())
    except psutil.Error:
        return False


@pytest.mark.skipif(not hasattr(os, "fork"), reason="the workers are forked from this test's process")
@pytest.mark.parametrize("how", ["killed", "raised"])
def test_a_worker_that_ends_without_its_result_costs_its_kata_nothing(workspace, monkeypatch, how):
    """A worker that dies (status 0 or a signal: out of memory, a fault) or stops on an error of kata's own that its
    loop did not expect: the kata it held is checked in kata's own process, the verdicts and their order are those
    of -j 1, and kata says which process ended and why; no internal error, no exit status 3."""
    from checker import catalogue, engine
    from checker.lang import speaking
    from checker.warm import parallel

    names = _mixed(workspace)
    work = [(catalogue.find(name).id, workspace / catalogue.find(name).file) for name in names]
    options = {"timeout": 30.0}
    expected = [engine.check_file(catalogue.find(kata_id), path, **options) for kata_id, path in work]
    checker_pid, real = os.getpid(), engine.check_file

    def ends_in_a_worker(kata, path, **kw):
        if os.getpid() != checker_pid and kata.id in ("numpy/attention", "numpy/softmax"):
            if how == "killed":
                os._exit(0)
            raise SystemExit("stopped")  # past the worker's `except Exception`
        return real(kata, path, **kw)

    monkeypatch.setattr(engine, "check_file", ends_in_a_worker)
    monkeypatch.setenv("KATA_SANDBOX", "fork")
    said = []
    with speaking("en"):
        got = list(parallel.check_all(work, 2, options, said.append))
        said = [str(s) for s in said]
    assert [(r.track, r.name, r.status) for r in got] == [(r.track, r.name, r.status) for r in expected]
    assert [[c.passed for c in r.checks] for r in got] == [[c.passed for c in r.checks] for r in expected]
    assert len(said) == 2 and all("kata checked it itself" in s for s in said), said
    assert all(("exit status 0" if how == "killed" else "SystemExit: stopped") in s for s in said), said
