"""Every laptop: the three start methods, and the paths of systems this machine is not.

The sandbox's promises are checked under fork, forkserver and spawn (KATA_SANDBOX) through the real
CLI. What differs on macOS or Windows is tested here by taking away what Linux has: a
sitecustomize on PYTHONPATH makes resource, termios, fcntl and tty unimportable, in kata and in
every child it starts.
"""

import json
import os
import signal
import subprocess
import sys
import time

import psutil
import pytest
from conftest import _DATA_HOME, ROOT, START_METHODS, UNWRAPPED, run_json, run_kata, variant

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
HOOK = "        d_k = Q.size(-1)"
BLOCKED = ("resource", "termios", "fcntl", "tty")
BLOCKER = f"""
import sys
import psutil  # its Linux backend needs resource; on Windows and macOS it does not
for name in {BLOCKED!r}:
    sys.modules.pop(name, None)

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name in {BLOCKED!r}:
            raise ImportError(f"simulated: no module named {{name!r}} on this system")

sys.meta_path.insert(0, _Missing())
"""


# What a CUDA build does with a GPU, on a CPU build: a device that torch's autograd engine counts, so that
# a backward pass starts its device threads and a process forked afterwards cannot run backward.
ACCELERATOR = """
import torch
import torch.utils.backend_registration as registration

class _Guard(torch._C._acc.DeviceGuard):
    def type_(self):
        return torch._C._autograd.DeviceType.PrivateUse1

    def deviceCount(self):
        return 1

registration._setup_privateuseone_for_python_backend(rename="fakegpu", device_guard=_Guard())
"""


# A process started past the boundary, as native code could start one (the boundary refuses every Python
# way): the function the boundary wraps, taken out of its wrapper. What it starts must still die with kata.
PAST_THE_BOUNDARY = """
import os, sys, _posixsubprocess
def start(code):
    fork_exec = _posixsubprocess.fork_exec.__closure__[0].cell_contents
    r, w = os.pipe()
    exe = os.fsencode(sys.executable)
    fork_exec([exe, b"-c", code.encode()], [exe], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False,
              -1, None, None, None, -1, None, False)
"""


def _inject(line: str) -> str:
    return SOLUTION.replace(HOOK, f"        {line}\n{HOOK}")


def _write(ws, name: str, source: str) -> None:
    (ws / name).write_text(source, encoding="utf-8")


def _by_name(doc) -> dict:
    return {k["name"]: k for k in doc["katas"]}


def _messages(kata) -> str:
    return "\n".join([kata["error"]] + [c["message"] for c in kata["checks"]])


@pytest.fixture
def without_posix_modules(tmp_path):
    folder = tmp_path / "site"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


@pytest.fixture
def with_an_accelerator(tmp_path):
    import torch.utils.backend_registration as registration

    if not hasattr(registration, "_setup_privateuseone_for_python_backend"):
        pytest.skip("this torch cannot register a device from Python (torch 2.5 and newer can)")
    folder = tmp_path / "accelerator"
    folder.mkdir()
    (folder / "sitecustomize.py").write_text(ACCELERATOR, encoding="utf-8")
    return {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")])}


# ----------------------------------------------------------------------------- the three start methods


@pytest.mark.parametrize("method", START_METHODS)
def test_verdicts_and_output_are_the_same_under_every_start_method(workspace, method):
    _write(workspace, "torch/attention.py", _inject("print('from your code: 注意力 √')"))
    wrong = variant("numpy_attention", "wrong_softmax_axis")
    _write(workspace, "numpy/attention.py", wrong.read_text(encoding="utf-8"))
    proc, doc = run_json("check", "attention", "numpy/attention", "--workspace", workspace,
                         env={"KATA_SANDBOX": method})
    katas = _by_name(doc)
    assert proc.returncode == 1, proc.stderr
    assert katas["attention"]["status"] == "pass", _messages(katas["attention"])
    assert "from your code: 注意力 √" in katas["attention"]["output"]
    assert katas["numpy/attention"]["status"] == "fail"
    assert "the axis a reduction, softmax" in katas["numpy/attention"]["diagnosis"]  # the error model


@pytest.mark.parametrize("method", START_METHODS)
def test_a_tensor_made_on_the_cpu_is_found_by_a_cold_check_under_every_start_method(workspace, method):
    """The device check's first meta call in a fresh process: the child imports the meta kernels in a
    thread (fork, spawn) or has them from the server (forkserver); the verdict is the same."""
    wrong = variant("torch_attention", "wrong_fill_on_cpu")
    _write(workspace, "torch/attention.py", wrong.read_text(encoding="utf-8"))
    proc, doc = run_json("check", "attention", "--workspace", workspace, env={"KATA_SANDBOX": method})
    (kata,) = doc["katas"]
    assert proc.returncode == 1 and kata["status"] == "fail", proc.stderr
    failed = [c for c in kata["checks"] if c["status"] not in ("pass", "followup")]
    assert [c["stage"] for c in failed] == ["properties"] and "meta" in failed[0]["message"], _messages(kata)
    assert failed[0]["line"], "the line where the CPU tensor meets the inputs"


@pytest.mark.parametrize("method", START_METHODS)
def test_endless_loops_and_huge_allocations_end_as_verdicts(workspace, method):
    _write(workspace, "torch/attention.py", _inject("torch.zeros(3 * 2**30)  # 12 GB of float32"))
    _write(workspace, "numpy/attention.py", "while True:\n    pass\n")
    proc, doc = run_json("check", "attention", "numpy/attention", "--timeout", "3", "--workspace", workspace,
                         env={"KATA_SANDBOX": method})
    katas = _by_name(doc)
    assert proc.returncode == 1, proc.stderr
    assert katas["attention"]["status"] in ("fail", "error")
    assert "more than 4 GB of memory" in _messages(katas["attention"])
    assert katas["numpy/attention"]["status"] == "timeout"


def _user_code_pids(marker_dir):
    return [int(p.read_text()) for p in marker_dir.glob("*.pid") if p.read_text()]


@pytest.mark.parametrize("method", START_METHODS)
def test_the_users_code_dies_with_a_killed_checker(workspace, tmp_path, method):
    """SIGKILL of `kata` while the user's code loops leaves none of it running, nor what it started."""
    marks = tmp_path / "marks"
    marks.mkdir()
    grandchild = (f"import os, pathlib, time; pathlib.Path({str(marks / 'grandchild.pid')!r})"
                  ".write_text(str(os.getpid())); time.sleep(600)")
    _write(workspace, "torch/attention.py",
           f"import os, pathlib, subprocess, sys\n{PAST_THE_BOUNDARY}\n"
           f"start({grandchild!r})\n"
           f"pathlib.Path({str(marks / 'child.pid')!r}).write_text(str(os.getpid()))\n"
           "while True:\n    pass\n")
    said = tmp_path / "kata.txt"
    with open(said, "w", encoding="utf-8") as out:
        kata = subprocess.Popen([sys.executable, "-m", "checker", "check", "attention", "--timeout", "120",
                                 "--workspace", str(workspace)], stdout=out, stderr=subprocess.STDOUT,
                                env={**os.environ, "KATA_SANDBOX": method})
    deadline = time.monotonic() + 120
    while len(_user_code_pids(marks)) < 2 and time.monotonic() < deadline and kata.poll() is None:
        time.sleep(0.1)
    pids = _user_code_pids(marks)
    assert len(pids) == 2, f"the user's code never started (kata: {kata.poll()}): {said.read_text(encoding='utf-8')}"
    kata.send_signal(signal.SIGKILL)
    kata.wait()
    deadline = time.monotonic() + 30  # under a loaded CI, the guard that ends the group may wait for a core
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    left = {p.name: _state(int(p.read_text())) for p in marks.glob("*.pid") if _running(int(p.read_text()))}
    assert not left, f"the user's code still runs 30 s after kata was killed: {left}"


LATE_STARTER = """
import time
from checker.sandbox import processes

if __name__ == "__main__":
    started = processes.launch
    def late():  # the starting thread goes on well past the moment the child sets its death signal
        child = started()
        time.sleep(6)
        return child
    processes.launch = late
    processes.prestart()
    processes._spare.join()
    time.sleep(2)  # a thread that ended with its work would have taken the child with it by now
    proc, _ = processes._spare.child
    print("alive" if proc.is_alive() else f"killed ({proc.exitcode})")
    processes.kill_tree(proc.pid)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="the parent-death signal is Linux's")
def test_a_child_started_ahead_of_time_outlives_the_moment_it_was_started(tmp_path):
    """Linux's parent-death signal follows the thread that started a child, not the process. A spare started on a
    thread that ended once its child had set that signal was killed: under load, a check whose user's code never
    ran. Spares start on one thread that lives as long as the checker."""
    script = tmp_path / "late_starter.py"
    script.write_text(LATE_STARTER, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "KATA_SANDBOX": "spawn"})
    assert run.stdout.strip() == "alive", run.stdout + run.stderr


QUIET_THREADS = """
import os, sys, time
from checker.sandbox import processes

if __name__ == "__main__":
    processes.die_with(os.getppid())  # its watch thread starts
    processes.prestart()  # spawn, forkserver: the thread that starts children starts, and starts one
    before = set(sys.modules)
    if processes._spare is not None:
        processes._spare.join()
    time.sleep(0.5)  # the watch has looked a few times
    print(sorted(set(sys.modules) - before))
    if processes._spare is not None:
        processes.kill_tree(processes._spare.child[0].pid)
"""


@pytest.mark.parametrize("method", START_METHODS)
def test_the_threads_kata_starts_import_nothing_while_it_imports_torch(tmp_path, method):
    """A parallel worker under spawn stopped, now and then under load, with "partially initialized module 'typing'
    has no attribute 'ClassVar'": its parent watch imported the boundary (and typing) in its thread while the
    worker imported torch in its own, and two threads importing at once can cross. What a background thread of
    kata's needs is imported before it starts, so that it imports nothing."""
    script = tmp_path / "quiet_threads.py"
    script.write_text(QUIET_THREADS, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "KATA_SANDBOX": method})
    assert run.returncode == 0 and run.stdout.strip() == "[]", run.stdout + run.stderr


CUT_LAUNCH = """
import multiprocessing, os, time
from multiprocessing import forkserver

if __name__ == "__main__":
    multiprocessing.get_context("forkserver").set_forkserver_preload(["checker.sandbox.preload"])
    r, w = forkserver.connect_to_new_process([])
    os.close(w)  # kata gone before it sent the new child what to run
    pid = forkserver.read_signed(r)
    while os.path.exists(f"/proc/{pid}"):
        time.sleep(0.05)
    print("done")
"""


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="the script waits on /proc")
def test_a_child_the_fork_server_starts_for_a_kata_that_exits_meanwhile_prints_nothing_beside_its_message(tmp_path):
    """kata exited with status 2 (a broken NumPy) while its thread that starts children ahead of time was launching one
    under the fork server. The new child found nothing to run and printed multiprocessing's traceback ("EOFError: Ran
    out of input") to the stderr it got from the server, kata's own, beside kata's message. The server lets go of the
    console as its children do."""
    script = tmp_path / "cut_launch.py"
    script.write_text(CUT_LAUNCH, encoding="utf-8")
    run = subprocess.run([sys.executable, str(script)], cwd=ROOT, capture_output=True, text=True, timeout=120,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.stdout.strip() == "done" and run.stderr == "", run.stdout + run.stderr


def _state(pid: int) -> tuple:
    """A process's state, parent and process group: what a failure should show."""
    try:
        p = psutil.Process(pid)
        return p.status(), p.ppid(), os.getpgid(pid)
    except (psutil.Error, OSError):
        return ("gone",)


def _running(pid: int) -> bool:
    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.NoSuchProcess:
        return False


# ----------------------------------------------------------------------------- other systems, simulated


def test_a_check_runs_under_spawn_without_resource_termios_fcntl_and_tty(workspace, without_posix_modules):
    """As on Windows: no resource (the checker watches the memory itself), no termios, fcntl or tty."""
    _write(workspace, "torch/attention.py", SOLUTION)
    _write(workspace, "numpy/attention.py", "import numpy as np\n" + "np.ones(3 * 2**30, dtype=np.float32)\n")
    proc, doc = run_json("check", "attention", "numpy/attention", "--workspace", workspace,
                         env={"KATA_SANDBOX": "spawn", **without_posix_modules})
    katas = _by_name(doc)
    assert proc.returncode == 1, proc.stderr
    assert katas["attention"]["status"] == "pass", _messages(katas["attention"])
    assert katas["numpy/attention"]["status"] == "error"
    assert "more than 4 GB of memory" in _messages(katas["numpy/attention"])


@pytest.mark.parametrize("method", START_METHODS[:2])
def test_a_runaway_allocation_gets_one_verdict_with_and_without_a_system_memory_cap(workspace, method,
                                                                                   without_posix_modules):
    """Linux caps the child's address space, and the call raises MemoryError; elsewhere the checker watches
    the child's memory and stops it. Either way: the same checks fail on memory, the others still run.
    (Under spawn the watcher starts a new child, torch imported again, after each of ~15 stopped calls: 30 s
    here; the watcher under spawn is tested on an allocation at import, in the test above.)"""
    _write(workspace, "torch/attention.py", _inject("_hog = torch.ones(3 * 2**30 // 8, dtype=torch.float64)"))
    verdicts = []
    for env in ({}, without_posix_modules):
        proc, doc = run_json("check", "attention", "--memory", "1", "--workspace", workspace,
                             env={"KATA_SANDBOX": method, **env})
        kata = doc["katas"][0]
        assert proc.returncode == 1 and kata["status"] == "fail", _messages(kata)
        verdicts.append([(c["name"], c["status"], "more than 1 GB of memory" in c["message"],
                          "same error" in c["message"]) for c in kata["checks"]])
    assert verdicts[0] == verdicts[1]
    assert any(memory for *_, memory, _ in verdicts[0]), "a failure that names the memory"
    assert all(status == "pass" for name, status, *_ in verdicts[0] if "source" in name), "the source checks still run"
    assert all(same for _, status, _, same in verdicts[0] if status == "skipped"), "only the same memory error is folded"


def test_under_spawn_a_clean_child_serves_the_next_kata_and_a_changed_one_does_not(workspace, monkeypatch):
    """A new spawned child imports torch again (seconds): one that comes back as it was serves the next
    file. Traps are taken off in between (layer_norm traps nn.LayerNorm, which add_norm may use); a file
    that replaced a library function, or left a process running, ends its child."""
    from checker import catalogue, engine
    from checker.sandbox import processes

    monkeypatch.setenv("KATA_SANDBOX", "spawn")
    monkeypatch.setattr(processes, "_recycled", None)
    solution = lambda name: ROOT / "solutions" / "torch" / f"{name}.py"  # noqa: E731
    assert engine.check_file(catalogue.find("layer_norm"), solution("layer_norm")).status == "pass"
    clean = processes._recycled
    assert clean is not None and clean[0].is_alive()
    assert engine.check_file(catalogue.find("add_norm"), solution("add_norm")).status == "pass"
    assert processes._recycled is not None and processes._recycled[0].pid == clean[0].pid, "the same child"
    patched = workspace / "torch" / "attention.py"
    patched.write_text(SOLUTION + "\ntorch.nn.functional.softmax = torch.softmax\n", encoding="utf-8")
    assert engine.check_file(catalogue.find("attention"), patched).status == "pass"
    assert processes._recycled is None and not clean[0].is_alive(), "a child whose torch was changed is ended"
    assert engine.check_file(catalogue.find("layer_norm"), solution("layer_norm")).status == "pass"
    started = workspace / "torch" / "rms_norm.py"
    started.write_text(f"{PAST_THE_BOUNDARY}\nstart('import time; time.sleep(60)')\n"
                       + solution("rms_norm").read_text(encoding="utf-8"), encoding="utf-8")
    assert engine.check_file(catalogue.find("rms_norm"), started).status == "pass"
    assert processes._recycled is None, "a child that left a process running is ended"
    assert engine.check_file(catalogue.find("layer_norm"), solution("layer_norm")).status == "pass"
    threads = workspace / "torch" / "swiglu.py"
    threads.write_text("import threading, time\nthreading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                       + solution("swiglu").read_text(encoding="utf-8"), encoding="utf-8")
    assert engine.check_file(catalogue.find("swiglu"), threads).status == "pass"
    assert processes._recycled is None, "a child that left a thread running is ended"


def test_without_a_death_signal_the_child_still_dies_with_the_checker(tmp_path):
    """As on macOS and Windows (no prctl): the child's own watch ends it and what it started."""
    marker = tmp_path / "grandchild.pid"
    child = (f"import os, pathlib, subprocess, sys, time\n"
             f"from checker.sandbox import processes\n"
             f"processes._death_signal = lambda: False\n"
             f"processes.die_with(os.getppid())\n"
             f"g = subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(600)'])\n"
             f"pathlib.Path({str(marker)!r}).write_text(f'{{os.getpid()}} {{g.pid}}')\n"
             f"while True:\n    pass\n")
    checker = subprocess.Popen([sys.executable, "-c",
                                f"import subprocess, sys, time\nsubprocess.Popen([sys.executable, '-c', {child!r}])\n"
                                "time.sleep(600)"], cwd=ROOT)
    deadline = time.monotonic() + 60
    while not (marker.exists() and marker.read_text()) and time.monotonic() < deadline:
        time.sleep(0.1)
    pids = [int(p) for p in marker.read_text().split()]
    assert all(_running(pid) for pid in pids)
    checker.send_signal(signal.SIGKILL)
    checker.wait()
    deadline = time.monotonic() + 10
    while any(_running(pid) for pid in pids) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not any(_running(pid) for pid in pids), "the child outlived the checker"


GRADIENT_KATAS = ("attention", "layer_norm", "dropout", "lora")  # each runs backward, in both processes


def test_no_sandbox_is_forked_from_a_process_that_ran_backward_with_an_accelerator_visible(with_an_accelerator):
    """On a CUDA build with a GPU, a child forked after the checker's first backward pass cannot run
    backward; the default start method never does that, and every reference passes."""
    proc, doc = run_json("check", *GRADIENT_KATAS, "--solution", env=with_an_accelerator)
    assert proc.returncode == 0, [(k["name"], _messages(k)) for k in doc["katas"] if k["status"] != "pass"]
    # Forking anyway made 29 of the 55 references fail on an H100 (torch 2.11+cu130), each report
    # blaming the user's code for autograd's threading: fork is refused there, in both languages.
    for lang, words in (("en", "KATA_SANDBOX=fork cannot be used"), ("zh", "不能用 KATA_SANDBOX=fork")):
        proc = run_kata("check", *GRADIENT_KATAS, "--solution", "--lang", lang,
                   env={**with_an_accelerator, "KATA_SANDBOX": "fork"})
        assert proc.returncode == 2 and words in proc.stderr + proc.stdout, proc.stderr


def test_an_accelerator_build_of_torch_or_a_device_it_reports_rules_out_fork(monkeypatch, tmp_path):
    from checker.sandbox import processes

    monkeypatch.delenv("KATA_SANDBOX", raising=False)
    monkeypatch.setattr(sys, "platform", "linux")
    version = tmp_path / "version.py"
    monkeypatch.setattr(processes, "_torch_version_file", lambda: str(version))
    for build, method in (("cuda: Optional[str] = None\nhip: Optional[str] = None", "fork"),
                          ("cuda: Optional[str] = '12.8'", "forkserver"), ("hip: Optional[str] = '6.4'", "forkserver"),
                          ("xpu: Optional[str] = '20250101'", "forkserver")):
        version.write_text(f"__version__ = '2.13.0'\n{build}\n", encoding="utf-8")
        monkeypatch.setattr(processes, "_accelerator", None)
        monkeypatch.setattr(processes, "_asked_torch", False)
        assert processes.start_method() == method, build
    monkeypatch.setattr(processes, "_accelerator", None)
    monkeypatch.setattr(processes, "_asked_torch", False)
    import torch

    monkeypatch.setattr(torch.accelerator, "is_available", lambda: True)  # e.g. torch_npu, which torch loads itself
    assert processes.start_method() == "forkserver"


MISSING = """
import sys

class _Missing:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] == {name!r}:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)

sys.meta_path.insert(0, _Missing())
"""


@pytest.mark.parametrize("package, broken", [("torch", False), ("torch", True), ("rich", False), ("numpy", True)])
def test_a_missing_or_broken_dependency_is_the_environment_not_a_bug_in_kata(tmp_path, package, broken):
    """Exit 2 and the install line, in the language chosen; never exit 3 ("report a bug in kata"). Under the fork
    server (macOS's start method, and Linux's with a CUDA build), whose preload imports the same packages: no
    traceback of the server's beside the message (seen on an H100)."""
    if broken:  # as a torch whose DLL does not load on Windows: it raises inside its own files
        folder = tmp_path / "site-packages"
        (folder / package).mkdir(parents=True)
        (folder / package / "__init__.py").write_text(
            'raise OSError("[WinError 126] Error loading c10.dll or one of its dependencies.")\n', encoding="utf-8")
    else:
        folder = tmp_path / "site"
        folder.mkdir()
        (folder / "sitecustomize.py").write_text(MISSING.format(name=package), encoding="utf-8")
    env = {"PYTHONPATH": os.pathsep.join([str(folder), os.environ.get("PYTHONPATH", "")]), "KATA_SANDBOX": "forkserver"}
    for lang, words in (("en", "not a bug in kata"), ("zh", "不是 kata 的缺陷")):
        proc = run_kata("check", "attention", "--solution", "--lang", lang, env=env)
        assert proc.returncode == 2, proc.stderr
        assert words in proc.stderr and "internal error" not in proc.stderr and "Traceback" not in proc.stderr
        assert f"pip install {'--force-reinstall ' if broken else ''}{package}" in proc.stderr, proc.stderr
        if package == "torch":
            assert "--index-url https://download.pytorch.org/whl/cpu" in proc.stderr, "the CPU build, not gigabytes"


def test_an_unknown_start_method_is_a_usage_error(workspace):
    proc = run_kata("check", "attention", "--workspace", workspace, env={"KATA_SANDBOX": "thread"})
    assert proc.returncode == 2 and "KATA_SANDBOX=thread" in proc.stderr


# ----------------------------------------------------------------------------- consoles and folders


def _run_encoded(encoding, *args):
    """The real CLI with stdout and stderr in encoding (a pipe, as a redirected GBK console would be)."""
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": UNWRAPPED, "XDG_DATA_HOME": _DATA_HOME, "KATA_WORKSPACE": "",
           "PYTHONIOENCODING": encoding}
    proc = subprocess.run([sys.executable, "-m", "checker", *map(str, args)], env=env, capture_output=True,
                          timeout=300)
    return proc.returncode, proc.stdout.decode(encoding), proc.stderr.decode(encoding)


def test_a_gbk_console_shows_distinct_marks_in_chinese(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("/ math.sqrt(d_k)", ""))
    code, out, err = _run_encoded("gbk", "check", "attention", "--lang", "zh", "--workspace", workspace)
    assert code == 1, err
    assert "√ 结构 → √ 形状" in out and "× 数值" in out, out


@pytest.mark.parametrize("encoding", ["gbk", "cp1252", "ascii"])
def test_a_console_that_cannot_encode_gets_replacements_not_a_crash(workspace, encoding):
    """√, ᵀ and ✓ on a GBK or cp1252 console, or a pipe with such an encoding."""
    _write(workspace, "torch/attention.py", SOLUTION.replace("/ math.sqrt(d_k)", ""))
    code, out, err = _run_encoded(encoding, "check", "attention", "--workspace", workspace)
    assert code == 1 and "d_k scale" in out, err
    passed, failed = {"gbk": ("√", "×"), "cp1252": ("ok", "×"), "ascii": ("ok", "x")}[encoding]
    lines = [line.strip("|│ ") for line in out.splitlines()]
    assert any(line.startswith(f"{passed} ") and "checks passed" in line for line in lines), out  # folded
    assert any(line.startswith(f"{failed} numerics:") for line in lines), out
    assert not any(line.startswith("? ") and ":" in line for line in lines), "a mark the console cannot show"
    code, out, err = _run_encoded(encoding, "check", "attention", "--json", "--workspace", workspace)
    assert code == 1, err
    assert "without the 1/√d_k scale" in json.loads(out)["katas"][0]["diagnosis"], "JSON escapes, never loses"
    for command in (["list", "--workspace", workspace], ["show", "attention"], ["show", "attention", "--lang", "zh"]):
        code, out, err = _run_encoded(encoding, *command)
        assert code == 0 and out.strip(), (command, err)


@pytest.fixture
def read_only(workspace):
    """The workspace, read-only: a read-only bind mount for root (whom permissions do not stop), else chmod."""
    if os.geteuid() == 0:
        mounted = subprocess.run(["mount", "--bind", str(workspace), str(workspace)], capture_output=True)
        if mounted.returncode != 0:
            pytest.skip("root without mount: a read-only folder cannot be made here")
        subprocess.run(["mount", "-o", "remount,bind,ro", str(workspace)], check=True)
        try:
            yield workspace
        finally:
            subprocess.run(["umount", str(workspace)], check=True)
    else:
        folders = [workspace, *(p for p in workspace.rglob("*") if p.is_dir())]
        for folder in folders:
            folder.chmod(0o555)
        try:
            yield workspace
        finally:
            for folder in folders:
                folder.chmod(0o755)


def test_a_read_only_workspace_is_read_and_every_refusal_says_why(workspace, request):
    _write(workspace, "torch/attention.py", SOLUTION)
    assert run_kata("check", "attention", "--workspace", workspace).returncode == 0
    assert run_kata("hint", "attention", "--workspace", workspace).returncode == 0
    ws = request.getfixturevalue("read_only")
    for command in (["list"], ["stats"], ["next"]):
        proc, doc = run_json(*command, "--workspace", ws)
        assert proc.returncode == 0 and not proc.stderr, (command, proc.stderr)
        assert "attention" in proc.stdout, f"{command} lost the history"
    listed = run_json("list", "--workspace", ws)[1]["katas"]
    assert next(k for k in listed if k["name"] == "attention")["status"] == "pass"
    for command, status in ((["check", "attention"], 0), (["hint", "attention"], 0),
                            (["solution", "attention", "--yes"], 0), (["reset", "attention", "--yes"], 2),
                            (["drill", "attention"], 2)):
        proc = run_kata(*command, "--workspace", ws, input="")
        assert proc.returncode == status, (command, proc.stderr)
        assert "read-only" in proc.stderr, command
    proc = run_kata("init", ws / "more")
    assert proc.returncode == 2 and "read-only" in proc.stderr
    assert (ws / "torch" / "attention.py").read_text(encoding="utf-8") == SOLUTION, "nothing the user wrote is lost"


@pytest.mark.parametrize("args", [
    ["check", "attention", "--timeout", "nan"], ["check", "attention", "--timeout", "inf"],
    ["check", "attention", "--memory", "-1"], ["check", "attention", "--memory", "1e300"],
    ["check", "attention", "--case", "99999999999999999999"], ["drill", "attention", "--minutes", "inf"],
    ["init", "/proc/no/such/folder"], ["init", "/dev/null"], ["show", ""], ["check", ""],
    ["next", "--count", "-1"], ["list", "--workspace", "/nonexistent"],
])
def test_no_argument_list_is_an_internal_error(workspace, args):
    proc = run_kata(*args, env={"KATA_WORKSPACE": str(workspace)}, input="", timeout=120)
    assert proc.returncode in (0, 1, 2), (args, proc.stderr)
    assert "internal error" not in proc.stderr


# ----------------------------------------------------------------------------- each platform branch, forced


def _missing(monkeypatch, *names):
    """Make modules unimportable in this process, as on a system without them."""
    for name in names:
        monkeypatch.setitem(sys.modules, name, None)


def test_start_method_follows_the_system_and_kata_sandbox(monkeypatch):
    from checker.sandbox import processes

    monkeypatch.delenv("KATA_SANDBOX", raising=False)
    monkeypatch.setattr(processes, "_accelerator", False)  # a CPU build of torch, as on this machine
    for platform, method in (("linux", "fork"), ("darwin", "forkserver"), ("win32", "spawn")):
        monkeypatch.setattr(sys, "platform", platform)
        assert processes.start_method() == method
    monkeypatch.setenv("KATA_SANDBOX", "Spawn")
    assert processes.start_method() == "spawn"


def test_memory_is_capped_by_the_system_only_where_it_enforces_the_cap(monkeypatch):
    from checker.sandbox import processes

    monkeypatch.setattr(sys, "platform", "darwin")  # accepts RLIMIT_AS and ignores it
    assert processes.cap_memory(1.0) is False
    monkeypatch.setattr(sys, "platform", "linux")
    _missing(monkeypatch, "resource")  # as on Windows
    assert processes.cap_memory(1.0) is False
    assert processes.memory_used(os.getpid()) > 0


def test_keys_come_from_msvcrt_on_windows_and_termios_elsewhere(monkeypatch):
    from checker.app import live

    class FakeMsvcrt:
        pending = list("q")

        @classmethod
        def kbhit(cls):
            return bool(cls.pending)

        @classmethod
        def getwch(cls):
            return cls.pending.pop()

    monkeypatch.setattr(sys.stdin, "isatty", lambda: True, raising=False)
    monkeypatch.setattr(sys.stdin, "fileno", lambda: 0, raising=False)
    monkeypatch.setitem(sys.modules, "msvcrt", FakeMsvcrt)
    assert live._key_source() == "msvcrt"
    watcher = live.Watcher([], events=False)
    with live.Keys() as keys:
        assert keys.fd is not None and keys.wait(watcher, 1.0) == ["q"]
    _missing(monkeypatch, "msvcrt")
    assert live._key_source() == "termios"
    _missing(monkeypatch, "termios")
    assert live._key_source() is None
    monkeypatch.setattr(sys.stdin, "isatty", lambda: False, raising=False)
    assert live._key_source() is None


def test_only_the_signals_a_system_has_end_a_watch(monkeypatch):
    import signal as signals

    from checker.app import live

    monkeypatch.delattr(signals, "SIGHUP")  # as on Windows
    monkeypatch.setattr(signals, "SIGBREAK", signals.SIGUSR1, raising=False)
    assert signals.SIGTERM in live._ending_signals_here() and signals.SIGUSR1 in live._ending_signals_here()
    with live._ending_signals():
        with pytest.raises(KeyboardInterrupt):
            os.kill(os.getpid(), signals.SIGUSR1)
            time.sleep(1)


@pytest.mark.parametrize("events", [True, False], ids=["watchfiles", "polling"])
def test_a_save_is_noticed_with_file_events_and_without(tmp_path, monkeypatch, events):
    from checker.app import live

    if not events:
        _missing(monkeypatch, "watchfiles")  # no native events: the stat comparison alone
    mine = tmp_path / "attention.py"
    mine.write_text("a")
    watcher = live.Watcher([mine])
    try:
        assert watcher.events is events
        time.sleep(0.3)  # the event thread is listening
        mine.write_text("bb")
        if events:
            assert watcher.woken.wait(5), "no file event arrived"
        assert watcher.changed() == [mine]
        assert watcher.changed() == []
    finally:
        watcher.close()


def test_a_running_drill_is_found_through_psutil(monkeypatch):
    from checker.app import practice

    monkeypatch.setattr(os, "kill", None)  # os.kill(pid, 0) is Ctrl-C on Windows: never used
    assert practice._alive(os.getpid())
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    assert not practice._alive(dead.pid) and not practice._alive(None)


def test_the_language_comes_from_kata_lang_then_the_locale_then_windows(monkeypatch):
    import ctypes

    from checker import lang

    for var in ("KATA_LANG", "LC_ALL", "LC_MESSAGES", "LANG"):
        monkeypatch.delenv(var, raising=False)
    assert lang.language() == "en"
    monkeypatch.setattr(sys, "platform", "win32")

    class Kernel32:
        @staticmethod
        def GetUserDefaultLocaleName(buffer, size):
            buffer.value = "zh-CN"
            return 6

    monkeypatch.setattr(ctypes, "windll", type("windll", (), {"kernel32": Kernel32}), raising=False)
    assert lang.language() == "zh", "a Chinese Windows without LANG"
    monkeypatch.setenv("LANG", "en_US.UTF-8")
    assert lang.language() == "en"
    monkeypatch.setenv("KATA_LANG", "zh")
    assert lang.language() == "zh" and lang.language("en") == "en"


def test_the_default_workspace_is_in_the_platforms_data_folder(monkeypatch, tmp_path):
    import platformdirs

    from checker.state import workspace

    monkeypatch.setattr(platformdirs, "user_data_dir", lambda name, appauthor=None: str(tmp_path / "AppData" / name))
    assert workspace.default_location() == tmp_path / "AppData" / "kata" / "workspace"
