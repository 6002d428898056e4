"""The sandbox as a boundary: what a curious or careless file tries, under fork, forkserver and spawn.

Each attack sits at the top of a different kata's (otherwise correct) reference, so one run of the real
CLI per start method tries them all; none may pass, each gets a message that names it, and afterwards
the history, the backups and the other files are as they were.
"""

import os
import sqlite3
import subprocess
import sys
import time

import psutil
import pytest

from conftest import ROOT, run_json

METHODS = ("fork", "forkserver", "spawn")

REFERENCE_BY_ENGINE = """from checker import catalogue, engine
globals().update(vars(engine.load_solution(catalogue.find("{kata}"))))
"""
REFERENCE_BY_PATH = """import pathlib, runpy, checker
globals().update(runpy.run_path(str(pathlib.Path(checker.__file__).parent.parent / "solutions" / "{file}")))
"""
WORKSPACE = "import pathlib\nws = pathlib.Path(__file__).resolve().parent.parent\n"

# kata -> (code put before its reference, words its report must contain)
ATTACKS = {
    "attention": (REFERENCE_BY_ENGINE, "kata's own files"),
    "layer_norm": (REFERENCE_BY_PATH, "kata's own files"),
    "multi_head_attention": ("import torch\nq = torch.ones(1, 1, 2, 3)\ntorch._C._nn.scaled_dot_product_attention(q, q, q)\n",
                             "called torch.nn.functional.scaled_dot_product_attention"),
    "kv_cache": ("import torch.nn.functional as F\n_sdpa = F.scaled_dot_product_attention.__wrapped__\n", "__wrapped__"),
    "grouped_query_attention": ("import torch, torch.nn.functional as F\nq = torch.ones(1, 1, 2, 3)\n"
                                "getattr(F, 'scaled_dot_product_' + 'attention')(q, q, q)\n"
                                "from checker.checks import rules\ngetattr(rules, 'TRAPPED', []).clear()\n",
                                "called torch.nn.functional.scaled_dot_product_attention"),
    "rms_norm": (WORKSPACE + "import os\nos.remove(ws / '.kata' / 'progress.db')\n", "your history"),
    "swiglu": (WORKSPACE + "(ws / 'torch' / 'bpe.py').write_text('overwritten')\n", "in your workspace"),
    "rope": (WORKSPACE + "import shutil\nshutil.rmtree(ws / 'backups')\n", "in your workspace"),
    "sliding_window": (WORKSPACE + "import sqlite3\nsqlite3.connect(str(ws / '.kata' / 'progress.db')).execute("
                       "\"insert into checks (kata, status) values ('bpe', 'pass')\")\n", "your history"),
    "alibi": ("import os\nif os.fork() == 0:\n    os.setsid()\n    if os.fork() == 0:\n"
              "        import time\n        time.sleep(60)\n    os._exit(0)\n", "start a process (os.fork)"),
    "cross_entropy": ("import os, signal\nos.kill(os.getppid(), signal.SIGSTOP)\n", "send a signal"),
    "feed_forward": ("import subprocess, sys\nsubprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)'])\n",
                     "start a process (subprocess.Popen)"),
    "positional_encoding": ("import ctypes\nctypes.string_at(0)\n", "native code through ctypes"),
    "masks": ("import gc\n_all = gc.get_objects()\n", "look inside the interpreter (gc.get_objects)"),
    "encoder_layer": (WORKSPACE + "(ws / 'junk.bin').write_bytes(b'x' * 300 * 2**20)\n", "in your workspace"),
}


def _attack(ws, kata: str) -> None:
    code, _ = ATTACKS[kata]
    reference = (ROOT / "solutions" / "torch" / f"{kata}.py").read_text(encoding="utf-8")
    (ws / "torch" / f"{kata}.py").write_text(code.format(kata=kata, file=f"torch/{kata}.py") + reference,
                                             encoding="utf-8")


def _messages(kata) -> str:
    return "\n".join([kata.get("error") or ""] + [c["message"] for c in kata["checks"]])


def _size(folder) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


@pytest.mark.parametrize("method", METHODS)
def test_no_attack_passes_and_nothing_outside_the_kata_is_touched(workspace, method):
    (workspace / "backups" / "kept").mkdir(parents=True)
    bpe_before = (workspace / "torch" / "bpe.py").read_bytes()
    for kata in ATTACKS:
        _attack(workspace, kata)
    size_before = _size(workspace)
    own = set(psutil.pids())
    proc, doc = run_json("check", *ATTACKS, "--timeout", "20", "--workspace", workspace, env={"KATA_SANDBOX": method})
    assert proc.returncode == 1, proc.stderr
    for kata in doc["katas"]:
        assert kata["status"] != "pass", kata["name"]
        assert ATTACKS[kata["name"]][1] in _messages(kata), (kata["name"], _messages(kata))
    # The history, the backups and the other files are as they were; the workspace did not grow.
    with sqlite3.connect(workspace / ".kata" / "progress.db") as db:
        assert db.execute("pragma quick_check").fetchone()[0] == "ok"
    listed = {k["name"]: k["status"] for k in run_json("list", "--workspace", workspace)[1]["katas"]}
    assert listed["bpe"] != "pass" and not any(listed[k] == "pass" for k in ATTACKS)
    assert (workspace / "backups" / "kept").is_dir()
    assert (workspace / "torch" / "bpe.py").read_bytes() == bpe_before
    assert _size(workspace) - size_before < 100 * 2**20
    time.sleep(2)
    left = [p for p in set(psutil.pids()) - own if _runs_user_code(p)]
    assert not left, "a process of the user's code outlived kata"


def _runs_user_code(pid: int) -> bool:
    try:
        return "time.sleep(60)" in " ".join(psutil.Process(pid).cmdline())
    except psutil.Error:
        return False


DAEMON = """
import os, sys, _posixsubprocess
# Past the boundary, as native code could: the function it wraps, taken out of the wrapper.
fork_exec = _posixsubprocess.fork_exec.__closure__[0].cell_contents
code = ("import os, pathlib, time\\n"
        "os.setsid()\\n"
        "if os.fork() == 0:\\n"
        "    pathlib.Path({marker!r}).write_text(str(os.getpid()))\\n"
        "    time.sleep(60)\\n")
r, w = os.pipe()
exe = os.fsencode(sys.executable)
fork_exec([exe, b"-c", code.encode()], [exe], True, (w,), None, None, -1, -1, -1, -1, -1, -1, r, w, True, False,
          -1, None, None, None, -1, None, False)
import time
while not os.path.exists({marker!r}):
    time.sleep(0.05)
"""


@pytest.mark.skipif(sys.platform != "linux", reason="a subreaper is Linux's")
@pytest.mark.parametrize("method", METHODS)
def test_a_daemon_started_past_the_boundary_dies_with_the_check_and_holds_no_pipe(workspace, tmp_path, method):
    marker = tmp_path / "daemon.pid"
    reference = (ROOT / "solutions" / "torch" / "rms_norm.py").read_text(encoding="utf-8")
    (workspace / "torch" / "rms_norm.py").write_text(DAEMON.format(marker=str(marker)) + reference, encoding="utf-8")
    started = time.monotonic()
    kata = subprocess.run([sys.executable, "-m", "checker", "check", "rms_norm", "--workspace", str(workspace)],
                          env={**os.environ, "KATA_SANDBOX": method, "NO_COLOR": "1"}, capture_output=True,
                          text=True, timeout=120)
    assert time.monotonic() - started < 60, "kata's output pipe was held open"
    assert kata.returncode == 0, kata.stdout + kata.stderr
    daemon = int(marker.read_text())
    deadline = time.monotonic() + 2
    while psutil.pid_exists(daemon) and psutil.Process(daemon).status() != psutil.STATUS_ZOMBIE:
        assert time.monotonic() < deadline, "the daemon outlived kata"
        time.sleep(0.1)
