"""kata watch and kata drill, end to end: on a real terminal (tmux), and without one.

On the terminal: save a wrong file, then a right one, and read what the screen shows; a drill ends
by success or by Ctrl-C. Without one: a drill that times out, a drill stopped by SIGTERM or killed
outright, hints locked during a drill, and watch's polling fallback. History is read back with
`kata stats --json` each time.
"""

import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

import pytest
from conftest import _DATA_HOME, ROOT, run_json, run_kata, variant
from rich.cells import cell_len

from checker import catalogue

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
NO_SCALE = SOLUTION.replace("/ math.sqrt(d_k)", "")  # wrong: "your output equals attention without the 1/√d_k scale"
# Written apart from the checks: a report of about 45 lines at 80 columns, ending in a diagnosis.
INVERTED = (variant("torch_attention", "wrong_mask_inverted")).read_text(encoding="utf-8")
DIAGNOSIS = {"en": "Diagnosis: your mask is inverted: True means 'may attend'",
             "zh": "诊断：你的掩码反了：True 表示“可以关注”"}
FAIL = {"en": "attention · FAIL", "zh": "attention · 未通过"}
ENV = {"NO_COLOR": "1", "XDG_DATA_HOME": _DATA_HOME, "KATA_WORKSPACE": "", "LANG": "C.UTF-8", "LC_ALL": ""}


def _until(condition, timeout=60.0, what="condition"):
    """Poll condition() until it returns something true; that value."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        value = condition()
        if value:
            return value
        time.sleep(0.1)
    raise AssertionError(f"timed out after {timeout:g} s waiting for {what}")


def _stats(ws):
    return run_json("stats", "--workspace", ws)[1]


def _drill_folder(ws):
    return _until(lambda: sorted((ws / "drills").glob("*/torch")) and sorted((ws / "drills").glob("*"))[-1],
                  what="the drill folder")


def _running_drill(ws):
    return _until(lambda: next((d for d in _stats(ws)["drills"] if d["end"] == "running"), None),
                  what="a running drill in the history")


class Terminal:
    """One tmux session of a fixed size running one kata command, on a private tmux server."""

    def __init__(self, name):
        self.tmux = ["tmux", "-u", "-L", f"kata-test-{os.getpid()}-{name}"]

    def start(self, *args, width=130, height=50, status_file=None):
        env = " ".join(f"{k}={shlex.quote(v)}" for k, v in ENV.items())
        command = shlex.join([sys.executable, "-m", "checker", *map(str, args)])
        # COLUMNS and LINES unset: rich must take the size of the tmux window, not of the test runner.
        # The shell traps Ctrl-C (a handler, so kata gets the default back) to live on and print kata's status.
        script = (f"trap : INT; cd {shlex.quote(str(ROOT))} && env -u COLUMNS -u LINES {env} {command};"
                  " echo EXIT=$?; sleep 600")
        if status_file is not None:  # a shell that outlives its window (HUP ignored) writes kata's status
            script = (f"trap '' HUP; cd {shlex.quote(str(ROOT))} && env -u COLUMNS -u LINES {env} {command};"
                      f" echo $? > {shlex.quote(str(status_file))}")
        subprocess.run([*self.tmux, "new-session", "-d", "-s", "kata", "-x", str(width), "-y", str(height),
                        "sh", "-c", script], check=True)

    def screen(self, history=False) -> str:
        extra = ["-S", "-1000"] if history else []
        return subprocess.run([*self.tmux, "capture-pane", "-p", "-J", "-t", "kata", *extra],
                              capture_output=True, text=True).stdout

    def wait_for(self, *texts, timeout=60.0, history=False) -> str:
        """Wait until every text shows; the screen, flattened to one line."""
        def shown():  # the screen as one line: rich folds long lines inside panels and tables
            screen = " ".join(self.screen(history).replace("│", " ").split())
            return screen if all(t in screen for t in texts) else None

        try:
            return _until(shown, timeout, what=f"{texts} on the screen")
        except AssertionError:
            raise AssertionError(f"{texts} never showed; the screen:\n{self.screen(history=True)}") from None

    def keys(self, *keys):
        subprocess.run([*self.tmux, "send-keys", "-t", "kata", *keys], check=True)

    def resize(self, width, height):
        subprocess.run([*self.tmux, "resize-window", "-t", "kata", "-x", str(width), "-y", str(height)], check=True)

    def lines(self) -> list[str]:
        """The screen as it is, line by line (no scrollback)."""
        return [line.rstrip() for line in self.screen().rstrip("\n").split("\n")]

    def close(self):
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


@pytest.fixture
def term(request):
    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed: the terminal screens of watch and drill cannot be driven")
    terminal = Terminal(request.node.name[-20:].strip("[]"))
    yield terminal
    terminal.close()


# ----------------------------------------------------------------------------- on a terminal


def test_watch_screen_turns_red_then_green_as_files_are_saved(term, workspace):
    mine = workspace / "torch" / "attention.py"
    term.start("watch", "attention", "--workspace", workspace)
    term.wait_for("attention ·", "r or Enter re-check")  # the stub's verdict: test_cli's business
    mine.write_text(NO_SCALE)
    screen = term.wait_for("attention · FAIL", "without the 1/√d_k scale", "q quit")  # keys last: all drawn
    assert "torch/attention.py" in screen and "✗ numerics" in screen
    mine.write_text(SOLUTION)
    term.wait_for("attention · PASS", "✓ hygiene", "q quit")
    checked = _stats(workspace)["katas"][0]["attempts"]  # at least the stub, the wrong and the right file
    term.keys("r")  # re-check by hand
    _until(lambda: _stats(workspace)["katas"][0]["attempts"] == checked + 1, what="the re-check asked for with r")
    term.keys("q")
    term.wait_for("EXIT=0")
    (row,) = _stats(workspace)["katas"]
    assert row["name"] == "attention" and row["attempts"] >= 4 and row["passes"] == 2


def test_watch_speaks_chinese_in_its_verdict(term, workspace):
    (workspace / "torch" / "attention.py").write_text(NO_SCALE)
    term.start("watch", "attention", "--workspace", workspace, "--lang", "zh")
    term.wait_for("attention · 未通过", "诊断：你的输出等于没有 1/√d_k 缩放的注意力", "q 退出")
    term.keys("q")
    term.wait_for("EXIT=0")


def test_drill_screen_counts_down_and_ends_when_all_is_green(term, workspace):
    term.start("drill", "attention", "--minutes", "5", "--workspace", workspace)
    term.wait_for("left", "attention", "NOT STARTED", "q end the drill")
    folder = _drill_folder(workspace)
    assert (folder / "torch" / "attention.py").read_text() == (ROOT / "katas" / "torch" / "attention.py").read_text()
    (folder / "torch" / "attention.py").write_text(NO_SCALE)
    term.wait_for("FAIL", "without the 1/√d_k scale")
    (folder / "torch" / "attention.py").write_text(SOLUTION)
    screen = term.wait_for("All green!", "Score", "EXIT=0", history=True)
    assert "Drill report" in screen and "custom: attention" in screen and folder.name in screen
    (drill,) = _stats(workspace)["drills"]
    assert drill["end"] == "done" and drill["green"] == 1 and drill["score"] >= 70
    (kata,) = drill["katas"]
    assert kata["attempts"] == 2 and kata["status"] == "pass" and kata["stage"] == "hygiene"
    assert 0 < kata["first_green_seconds"] < 300
    assert run_json("list", "--workspace", workspace)[1]["katas"][0]["status"] == "not_started", \
        "a drill's checks are not the workspace file's"


def test_ctrl_c_ends_a_drill_with_its_report(term, workspace):
    term.start("drill", "attention-core", "--minutes", "5", "--workspace", workspace)
    term.wait_for("left", "multi_head_attention")
    (_drill_folder(workspace) / "torch" / "attention.py").write_text(SOLUTION)
    term.wait_for("PASS")
    term.keys("C-c")
    screen = term.wait_for("EXIT=130", history=True)
    assert "Interrupted (Ctrl-C)" in screen and "Drill report · attention-core" in screen
    assert "Your first 'attention-core' drill" in screen
    (drill,) = _stats(workspace)["drills"]
    assert drill["end"] == "interrupted" and drill["green"] == 1 and len(drill["katas"]) == 2
    assert 0 < drill["score"] < 100


# ----------------------------------------------------------------------------- at 80×24


def _fits(term, *texts, width=80, height=24):
    """Wait until the screen shows every text in height lines of at most width cells, the header first
    (once: no garbling) and the keys last; those lines."""
    header = ("kata watch ·", "kata drill ·")

    def whole():
        lines = term.lines()
        flat = " ".join(" ".join(lines).split())
        return lines if (len(lines) == height and "q " in lines[-1] and lines[0].startswith(header)
                         and sum(line.startswith(header) for line in lines) == 1
                         and all(cell_len(line) <= width for line in lines) and all(t in flat for t in texts)) else None

    try:
        return _until(whole, timeout=60, what=f"{texts} on a whole screen of {height} lines")
    except AssertionError:
        raise AssertionError(f"{texts} never showed on a whole {width}×{height} screen:\n{term.screen()}") from None


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_watch_at_80x24_keeps_name_status_and_diagnosis_on_screen_while_the_report_scrolls(term, workspace, lang):
    mine = workspace / "torch" / "attention.py"
    term.start("watch", "attention", "--workspace", workspace, "--lang", lang, width=80, height=24)
    term.wait_for("attention ·", "q 退出" if lang == "zh" else "q quit")
    mine.write_text(INVERTED)
    lines = _fits(term, FAIL[lang], DIAGNOSIS[lang], "12" if lang == "zh" else "1–")
    text = " ".join(" ".join(lines).split())
    folded = r"✓ \d+ 项检查通过" if lang == "zh" else r"✓ (1 check|\d+ checks) passed"
    assert re.search(folded, text), "the passed checks fold into a count"
    assert "PgDn" in text and ("✗ 掩码" if lang == "zh" else "✗ masking") in text
    assert not any(line.startswith("Attention weights") or line.startswith("注意力权重") for line in lines)
    for _ in range(4):  # page down to the heat map at the end of the report
        term.keys("NPage")
    lines = _fits(term, "q0", FAIL[lang], DIAGNOSIS[lang])
    title = next(i for i, line in enumerate(lines) if line.startswith(FAIL[lang]))
    assert "✗" in lines[title + 1], "the stage bar stays under the title"

    term.resize(120, 30)  # a resize redraws everything at the new size: no garbling, no key to press
    lines = _fits(term, FAIL[lang], width=120, height=30)
    assert any(line.startswith(DIAGNOSIS[lang]) and "~mask" in line for line in lines), \
        "the diagnosis now fits on one line"
    term.resize(80, 24)
    _fits(term, FAIL[lang], DIAGNOSIS[lang])
    term.keys("q")
    term.wait_for("EXIT=0", FAIL[lang], history=True)  # the last report stays once the screen is gone


def _same_size_and_time(path, text):
    """Save text in path with the old size and modification time: a change that no file event or stat reveals
    (on a file system keeping seconds, a save in the same second of the same length looks like this)."""
    old = path.stat()
    data = text.encode() + b"#" * (old.st_size - len(text.encode()) - 1) + b"\n"
    assert len(data) == old.st_size
    path.write_bytes(data)
    os.utime(path, ns=(old.st_atime_ns, old.st_mtime_ns))


def test_drill_at_80x24_shows_the_diagnosis_r_rechecks_only_what_changed_and_q_keeps_the_score(term, workspace):
    term.start("drill", "attention-core", "--minutes", "5", "--workspace", workspace, width=80, height=24)
    term.wait_for("left", "multi_head_attention", "NOT STARTED", "q end the drill")
    mine = _drill_folder(workspace) / "torch" / "attention.py"
    mine.write_text(INVERTED)
    lines = _fits(term, FAIL["en"], DIAGNOSIS["en"], "✗ masking", "PgDn")
    assert lines[0].startswith("kata drill · attention-core") and "left" in lines[0]
    assert "…" not in " ".join(lines) and "..." not in " ".join(lines), "nothing cut before the diagnosis"

    term.keys("r")  # nothing changed since the check: nothing is re-checked, and the screen says so
    term.wait_for("r: no file changed since its last check")
    assert [k["attempts"] for k in _running_drill(workspace)["katas"]] == [1, 0]

    _same_size_and_time(mine, SOLUTION)  # unseen by the watcher: only r finds it
    term.keys("r")
    term.wait_for("r: re-checking only what changed since its last check: attention", "attention · PASS")
    assert [k["attempts"] for k in _running_drill(workspace)["katas"]] == [2, 0], "the unchanged file is not re-run"

    term.keys("q")
    screen = term.wait_for("Drill ended.", "Score", "EXIT=1", history=True)
    (drill,) = _stats(workspace)["drills"]
    assert drill["end"] == "quit" and drill["green"] == 1 and drill["score"] > 0
    assert f"Score {drill['score']}/100" in screen


def test_a_drill_in_chinese_at_80x24_and_a_save_just_before_q_counts(term, workspace):
    term.start("drill", "attention-core", "--minutes", "5", "--workspace", workspace, "--lang", "zh",
               width=80, height=24)
    term.wait_for("剩余", "multi_head_attention", "未开始", "q 结束练习")
    mine = _drill_folder(workspace) / "torch" / "attention.py"
    mine.write_text(INVERTED)
    _fits(term, FAIL["zh"], DIAGNOSIS["zh"], "✗ 掩码", "PgDn")
    mine.write_text(SOLUTION)
    term.keys("q")  # at once: the save is checked before the drill ends
    term.wait_for("练习结束。", "EXIT=1", history=True)
    (drill,) = _stats(workspace)["drills"]
    assert drill["end"] == "quit" and drill["green"] == 1 and drill["score"] > 0


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_the_third_llm_sets_drill_at_80x24_names_its_mistake_and_ends_green_in_both_languages(term, workspace, lang):
    """The beyond-the-model preset (issue 39): its four katas on the screen, a wrong PPO loss diagnosed by the error
    model within 80×24, then the reference, and q keeps the score."""
    term.start("drill", "beyond-the-model", "--minutes", "5", "--workspace", workspace, "--lang", lang,
               width=80, height=24)
    names = ("ppo_loss", "quantize_int8", "attention_merge", "muon")
    term.wait_for(*names, "未开始" if lang == "zh" else "NOT STARTED", "q 结束练习" if lang == "zh" else "q end the drill")
    mine = _drill_folder(workspace) / "torch" / "ppo_loss.py"
    mine.write_text(variant("torch_ppo_loss", "wrong_clip_range_written_in").read_text(encoding="utf-8"))
    said = ("诊断：" if lang == "zh" else "Diagnosis:")
    lines = _fits(term, "ppo_loss · 未通过" if lang == "zh" else "ppo_loss · FAIL", said)
    assert lines[0].startswith("kata drill · beyond-the-model")
    mine.write_text((ROOT / "solutions" / "torch" / "ppo_loss.py").read_text(encoding="utf-8"))
    _fits(term, "ppo_loss · 通过" if lang == "zh" else "ppo_loss · PASS")
    term.keys("q")
    term.wait_for("练习结束。" if lang == "zh" else "Drill ended.", "EXIT=1", history=True)
    (drill,) = _stats(workspace)["drills"]
    assert drill["preset"] == "beyond-the-model" and drill["end"] == "quit" and drill["green"] == 1


def test_closing_the_window_ends_a_drill_recorded_and_without_an_internal_error(term, workspace, tmp_path):
    status = tmp_path / "status"
    term.start("drill", "attention-core", "--minutes", "5", "--workspace", workspace, width=80, height=24,
               status_file=status)
    term.wait_for("left", "multi_head_attention")
    (_drill_folder(workspace) / "torch" / "attention.py").write_text(SOLUTION)
    term.wait_for("attention · PASS")
    term.close()  # the window goes: SIGHUP, and the terminal the last report would go to is gone
    code = int(_until(lambda: status.exists() and status.read_text().strip(), what="kata's exit status"))
    assert code == 130, f"exit status {code}: closing the window is no error of kata's (3 would be)"
    (drill,) = _stats(workspace)["drills"]
    assert drill["end"] == "interrupted" and drill["green"] == 1 and drill["score"] > 0


# ----------------------------------------------------------------------------- without a terminal


def test_drills_that_time_out_are_reported_and_compared(workspace):
    proc, first = run_json("drill", "random-mix", "--minutes", "0.03", "--workspace", workspace)
    assert proc.returncode == 1, proc.stderr
    assert first["end"] == "time" and first["score"] == 0 and first["earlier"]["count"] == 0
    assert sorted(catalogue.find(k["name"]).difficulty for k in first["katas"]) == [1, 2, 3]
    assert "Drill 1" in proc.stderr, "the notes go to stderr; stdout holds only the JSON report"

    proc = run_kata("drill", "random-mix", "--minutes", "0.03", "--workspace", workspace)
    assert proc.returncode == 1 and "Time is up." in proc.stdout and "Score 0/100" in proc.stdout
    assert "Earlier 'random-mix' drills (1)" in proc.stdout
    drills = _stats(workspace)["drills"]
    assert [d["end"] for d in drills] == ["time", "time"] and [d["preset"] for d in drills] == ["random-mix"] * 2
    assert "random-mix" in run_kata("stats", "--workspace", workspace).stdout


def test_hints_are_locked_during_a_drill_and_sigterm_ends_it_cleanly(workspace):
    drill = subprocess.Popen([sys.executable, "-m", "checker", "drill", "attention", "--minutes", "5", "--json",
                              "--workspace", str(workspace)], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                             text=True, env={**os.environ, **ENV})
    try:
        _running_drill(workspace)
        for command in (["hint", "attention"], ["solution", "attention", "--yes"], ["hint", "numpy/softmax"]):
            proc = run_kata(*command, "--workspace", workspace)
            assert proc.returncode == 2 and "locked" in proc.stderr, command
        drill.send_signal(signal.SIGTERM)
        out, _ = drill.communicate(timeout=60)
    finally:
        drill.kill()
    assert drill.returncode == 130
    assert json.loads(out)["end"] == "interrupted"
    assert run_kata("hint", "attention", "--workspace", workspace).returncode == 0, "unlocked once it ended"


def test_allowed_hints_cost_points_and_a_killed_drill_keeps_its_history(workspace, tmp_path):
    log = tmp_path / "drill.log"
    with open(log, "w") as out:
        drill = subprocess.Popen([sys.executable, "-m", "checker", "drill", "attention-core", "--minutes", "5",
                                  "--allow-hints", "--workspace", str(workspace)], stdout=out,
                                 stderr=subprocess.STDOUT, stdin=subprocess.DEVNULL, env={**os.environ, **ENV})
    try:
        try:
            _running_drill(workspace)
        except AssertionError:  # say what the drill printed, and whether it is still alive
            raise AssertionError(f"drill exit status {drill.poll()}, output:\n{log.read_text()}") from None
        proc, hint = run_json("hint", "attention", "--workspace", workspace)
        assert proc.returncode == 0 and hint["level"] == 1
        (_drill_folder(workspace) / "torch" / "attention.py").write_text(SOLUTION)
        _until(lambda: _stats(workspace)["drills"][0]["green"] == 1, what="the drill's check to be recorded")
    finally:
        drill.kill()  # SIGKILL: no chance to write anything more
        drill.wait()
    (record,) = _stats(workspace)["drills"]
    assert record["end"] == "killed" and record["katas"][0]["hints"] == 1 and record["score"] > 0
    assert record["katas"][0]["first_green_seconds"] is not None
    assert record["katas"][0]["score"] <= 90, "a hint costs 10 points"
    assert run_json("hint", "attention", "--workspace", workspace)[1]["level"] == 1, \
        "the drill's hints were the drill's; outside it the levels start again"


def test_watch_without_a_terminal_polls_and_suggests_the_next_kata(workspace, tmp_path):
    """Started as a script starts a background job, with SIGINT ignored (Python then leaves it ignored):
    an explicit SIGINT still ends the watch cleanly."""
    log = tmp_path / "watch.log"
    ignore_sigint = (lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if os.name == "posix" else None
    with open(log, "w") as out:
        watch = subprocess.Popen([sys.executable, "-m", "checker", "watch", "--poll", "--workspace", str(workspace)],
                                 stdout=out, stderr=subprocess.STDOUT, env={**os.environ, **ENV, "COLUMNS": "120"},
                                 preexec_fn=ignore_sigint)
    try:
        _until(lambda: "numpy/softmax · " in log.read_text(), what="the first check")
        softmax = (ROOT / "solutions" / "numpy" / "softmax.py").read_text()
        (workspace / "numpy" / "softmax.py").write_text(softmax)
        _until(lambda: "numpy/softmax · PASS" in log.read_text(), what="the re-check after the save")
        watch.send_signal(signal.SIGINT)
        try:
            watch.wait(timeout=60)
        except subprocess.TimeoutExpired:  # seen once in CI: every thread's stack says where it is stuck
            watch.send_signal(signal.SIGUSR1)
            time.sleep(2)
            raise AssertionError(f"watch still runs 60 s after Ctrl-C:\n{log.read_text()[-6000:]}") from None
    finally:
        watch.kill()
    text = log.read_text()
    assert watch.returncode == 130
    assert "Passed. Next: numpy/masks" in " ".join(text.split())
    assert "r or Enter" not in text, "no keys without a terminal"
    assert next(k for k in _stats(workspace)["katas"] if k["name"] == "numpy/softmax")["attempts"] == 2
