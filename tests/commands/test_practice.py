"""hint, solution, reset, stats and next, through the real CLI in a subprocess, without a terminal."""

import json
import sqlite3
import sys
from datetime import datetime, timedelta, timezone

import pytest
from rich.cells import cell_len

from checker.state.progress import MIGRATIONS
from conftest import ROOT, run_json, run_kata

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
STUB = (ROOT / "katas" / "torch" / "attention.py").read_text(encoding="utf-8")


def _db(ws):
    return sqlite3.connect(ws / ".kata" / "progress.db")


def _flat(text):
    """Output with rich's line wrapping undone."""
    return " ".join(text.split())


def _stats(ws, name):
    _, doc = run_json("stats", "--workspace", ws)
    return next((k for k in doc["katas"] if k["name"] == name), None)


def test_hint_gives_one_more_level_each_time_up_to_three(workspace):
    levels = [run_json("hint", "attention", "--workspace", workspace)[1] for _ in range(4)]
    assert [d["level"] for d in levels] == [1, 2, 3, 3]
    assert [len(d["hints"]) for d in levels] == [1, 2, 3, 3]
    assert "weighted average" in levels[0]["hints"][0] and "masked_fill" in levels[2]["hints"][2]
    assert _stats(workspace, "attention")["hints"] == 4, "every hint asked is in the history"


def test_hint_speaks_the_language_asked_for(workspace):
    proc = run_kata("hint", "attention", "--lang", "zh", "--workspace", workspace)
    assert proc.returncode == 0 and "提示 1/3" in proc.stdout and "加权平均" in proc.stdout
    proc = run_kata("hint", "attention", "--workspace", workspace, env={"LANG": "zh_CN.UTF-8", "LC_ALL": ""})
    assert "提示 2/3" in proc.stdout, "the locale chooses when --lang is not given"
    proc = run_kata("hint", "attention", "--lang", "en", "--workspace", workspace)
    assert "Hint 3 of 3 (near-code)" in proc.stdout and "kata solution attention" in proc.stdout


def test_hint_levels_start_again_after_a_reset(workspace):
    run_kata("hint", "attention", "--workspace", workspace)
    run_kata("hint", "attention", "--workspace", workspace)
    (workspace / "torch" / "attention.py").write_text("# my try\n")
    assert run_kata("reset", "attention", "--yes", "--workspace", workspace).returncode == 0
    assert run_json("hint", "attention", "--workspace", workspace)[1]["level"] == 1


def test_solution_asks_first_and_refuses_without_a_terminal(workspace):
    proc = run_kata("solution", "attention", "--workspace", workspace)
    assert proc.returncode == 2 and "--yes" in proc.stderr and not proc.stdout
    assert _stats(workspace, "attention") is None, "nothing recorded when nothing was shown"

    proc = run_kata("solution", "attention", "--yes", "--workspace", workspace)
    assert proc.returncode == 0
    assert "class ScaledDotProductAttention" in proc.stdout
    assert "Why it is written this way" in proc.stdout and "softmax does not saturate" in proc.stdout
    assert "Pitfalls it avoids" in proc.stdout and "1/√d_k" in proc.stdout
    assert _stats(workspace, "attention")["solutions"] == 1


def test_solution_is_shown_without_asking_once_the_kata_passes(workspace):
    (workspace / "torch" / "attention.py").write_text(SOLUTION)
    assert run_kata("check", "attention", "--workspace", workspace).returncode == 0
    proc = run_kata("solution", "attention", "--lang", "zh", "--workspace", workspace)
    assert proc.returncode == 0 and "参考答案" in proc.stdout and "为什么这样写" in proc.stdout


def test_reset_keeps_a_dated_backup_and_asks_first(workspace):
    mine = workspace / "torch" / "attention.py"
    mine.write_text("# my work in progress\n")
    proc = run_kata("reset", "attention", "--workspace", workspace)
    assert proc.returncode == 2 and "--yes" in proc.stderr
    assert mine.read_text() == "# my work in progress\n", "refused: nothing touched"

    proc = run_kata("reset", "attention", "--yes", "--workspace", workspace)
    assert proc.returncode == 0, proc.stderr
    assert mine.read_text() == STUB
    (backup,) = (workspace / "backups").glob("*/torch/attention.py")
    assert backup.read_text() == "# my work in progress\n"
    assert backup.parent.parent.name[:8].isdigit(), "the backup folder is dated"
    assert str(backup) in proc.stdout.replace("\n", "")  # long paths are folded, not wrapped at spaces

    proc = run_kata("reset", "attention", "--yes", "--workspace", workspace)
    assert proc.returncode == 0 and "already the blank stub" in proc.stdout


def test_reset_all_restores_every_changed_or_missing_stub(workspace):
    (workspace / "torch" / "attention.py").write_text("# a\n")
    (workspace / "numpy" / "softmax.py").unlink()
    proc = run_kata("reset", "--all", "--yes", "--workspace", workspace)
    assert proc.returncode == 0, proc.stderr
    assert (workspace / "torch" / "attention.py").read_text() == STUB
    assert (workspace / "numpy" / "softmax.py").is_file()
    assert len(list((workspace / "backups").glob("*/*/*.py"))) == 1, "a missing file has nothing to back up"
    assert run_kata("reset", "--workspace", workspace).returncode == 2, "no kata named"


def test_stats_counts_attempts_pass_rate_and_time_to_green(workspace):
    proc, doc = run_json("stats", "--workspace", workspace)
    assert proc.returncode == 0 and doc == {"katas": [], "drills": [], "quiz": None}
    assert "No history yet" in run_kata("stats", "--workspace", workspace).stdout

    mine = workspace / "torch" / "attention.py"
    mine.write_text("x = 1\n")
    run_kata("reset", "attention", "--yes", "--workspace", workspace)  # a round with a known start
    mine.write_text(SOLUTION.replace("/ math.sqrt(d_k)", ""))
    run_kata("check", "attention", "--workspace", workspace)
    mine.write_text(SOLUTION)
    run_kata("check", "attention", "--workspace", workspace)
    row = _stats(workspace, "attention")
    assert row["attempts"] == 2 and row["passes"] == 1 and row["pass_rate"] == 0.5
    assert row["best_seconds_to_green"] is not None and row["seconds_to_green"] == [row["last_seconds_to_green"]]
    table = run_kata("stats", "--workspace", workspace).stdout
    assert "attention" in table and "50%" in table and "today" in table


def test_next_in_a_new_workspace_follows_the_learning_path(workspace):
    proc, doc = run_json("next", "--workspace", workspace)
    assert proc.returncode == 0
    first = [k for k in json.loads(run_kata("list", "--json", "--workspace", workspace).stdout)["katas"]][:3]
    assert [p["name"] for p in doc["next"]] == [k["name"] for k in first]
    assert {p["kind"] for p in doc["next"]} == {"new"}
    assert "kata watch numpy/softmax" in run_kata("next", "--workspace", workspace).stdout


def test_next_in_an_experienced_workspace_brings_back_hard_and_old_katas(workspace):
    """softmax passed 40 days ago, attention 2 days ago after looking at the solution, masks today;
    layer_norm is failing: work in progress first, then due reviews (most overdue first), then new
    katas in order, then reviews that are not due yet."""
    for name in ("softmax", "masks", "layer_norm"):
        text = (ROOT / "solutions" / "numpy" / f"{name}.py").read_text()
        if name == "layer_norm":
            text = "def layer_norm(*args, **kwargs):\n    return 0\n"
        (workspace / "numpy" / f"{name}.py").write_text(text)
    (workspace / "torch" / "attention.py").write_text(SOLUTION)
    run_kata("solution", "attention", "--yes", "--workspace", workspace)
    run_kata("check", "numpy/softmax", "numpy/masks", "numpy/layer_norm", "attention", "--workspace", workspace)
    with _db(workspace) as db:
        for kata, days in (("numpy/softmax", 40), ("attention", 2)):
            old = (datetime.now(timezone.utc) - timedelta(days=days)).isoformat(timespec="seconds")
            db.execute("UPDATE checks SET at = ? WHERE kata = ?", (old, kata))
            db.execute("UPDATE events SET at = ? WHERE kata = ?", (old, kata))

    _, doc = run_json("next", "--count", "100", "--workspace", workspace)  # the whole catalogue
    picks = {p["name"]: p for p in doc["next"]}
    order = [p["name"] for p in doc["next"]]
    assert order[0] == "numpy/layer_norm" and picks["numpy/layer_norm"]["kind"] == "continue"
    assert order[1] == "numpy/softmax" and "40 days ago" in picks["numpy/softmax"]["reason"]
    assert order[2] == "attention" and "solution" in picks["attention"]["reason"]
    assert picks["attention"]["command"] == "kata drill attention"
    assert order[3] == "numpy/attention" and picks["numpy/attention"]["kind"] == "new"
    assert order[4] == "quiz" and "not asked yet" in picks["quiz"]["reason"], "the passed katas' questions next"
    assert order[-1] == "numpy/masks" and picks["numpy/masks"]["due_in_days"] > 0, "recent and easy: not due yet"
    assert "现在练什么" in run_kata("next", "--lang", "zh", "--workspace", workspace).stdout


def test_an_old_database_is_migrated_and_keeps_its_history(workspace):
    db_path = workspace / ".kata" / "progress.db"
    db_path.unlink(missing_ok=True)
    with sqlite3.connect(db_path) as db:  # the schema of the first release, with one check in it
        db.executescript("""
            CREATE TABLE checks (id INTEGER PRIMARY KEY, kata TEXT NOT NULL, at TEXT NOT NULL, status TEXT NOT NULL,
                seconds REAL NOT NULL, user_seconds REAL, passed INTEGER NOT NULL, total INTEGER NOT NULL, stage TEXT);
            INSERT INTO checks (kata, at, status, seconds, user_seconds, passed, total, stage)
                VALUES ('attention', '2024-01-02T03:04:05+00:00', 'pass', 0.5, 0.001, 10, 10, 'hygiene');
        """)
    proc, doc = run_json("list", "--workspace", workspace)
    assert {k["name"]: k for k in doc["katas"]}["attention"]["status"] == "pass"
    assert _stats(workspace, "attention")["attempts"] == 1
    run_kata("hint", "attention", "--workspace", workspace)
    with sqlite3.connect(db_path) as db:
        assert db.execute("PRAGMA user_version").fetchone()[0] == len(MIGRATIONS), "migrated to the latest"
        assert db.execute("PRAGMA journal_mode").fetchone()[0] == "wal"
        assert db.execute("SELECT COUNT(*) FROM events").fetchone()[0] == 1
        assert db.execute("SELECT at FROM checks").fetchall() == [("2024-01-02T03:04:05+00:00",)]


def test_a_corrupt_database_is_reported_and_left_alone(workspace):
    db_path = workspace / ".kata" / "progress.db"
    db_path.write_bytes(b"this is not a database" * 100)
    for command in (["stats"], ["next"], ["hint", "attention"], ["drill", "attention", "--minutes", "1"]):
        proc = run_kata(*command, "--workspace", workspace)
        assert proc.returncode == 2, (command, proc.stderr)
        assert "progress database" in proc.stderr and "left untouched" in _flat(proc.stderr)
    assert db_path.read_bytes() == b"this is not a database" * 100


def test_drill_presets_are_listed(workspace):
    proc, doc = run_json("drill", "--list")
    assert proc.returncode == 0
    presets = {p["name"]: p for p in doc["presets"]}
    assert presets["attention-core"]["katas"] == ["attention", "multi_head_attention"]
    assert presets["attention-core"]["minutes"] == 30 and presets["random-mix"]["difficulties"] == [1, 2, 3]
    assert "full-transformer" in presets and "numpy-basics" in presets
    assert "attention-core" in run_kata("drill", "--list").stdout
    for lang in ("en", "zh"):  # at 80 columns: the table whole, no kata name cut or parted from its comma
        out = run_kata("drill", "--list", "--lang", lang, env={"COLUMNS": "80"}).stdout
        rows = [line for line in out.splitlines() if line.startswith("│")]
        assert rows and all(cell_len(line) <= 80 and line.endswith("│") for line in rows), out
        names = [cell.strip() for line in rows for cell in line.split("│")[4:5]]
        assert not any(name.startswith(",") for name in names) and "grouped_query_attention," in names, out
    assert presets["llm-decoder"]["minutes"] == 45


def test_every_preset_names_only_katas_of_the_catalogue():
    from checker import catalogue
    from checker.app import practice

    known = {k.id for k in catalogue.all_katas()}
    for name, preset in practice.PRESETS.items():
        assert set(preset.katas) <= known, f"{name}: {set(preset.katas) - known}"


@pytest.mark.parametrize("args", [["drill"], ["drill", "attention-core", "attention"],
                                  ["drill", "attention", "--minutes", "0"], ["drill", "attentoin"],
                                  ["hint", "attentoin"], ["solution"], ["next", "--count", "x"]])
def test_usage_errors_exit_2(workspace, args):
    proc = run_kata(*args, "--workspace", workspace)
    assert proc.returncode == 2, proc.stderr
    assert proc.stderr.strip()


@pytest.mark.parametrize("command", ["watch", "drill", "hint", "solution", "reset", "stats", "next", "quiz"])
def test_every_new_command_has_help(command):
    proc = run_kata(command, "--help")
    assert proc.returncode == 0 and "exit status" in proc.stdout and command in proc.stdout


@pytest.mark.parametrize("command", [["list"], ["hint", "attention"], ["stats"], ["next"], ["drill", "--list"],
                                     ["solution", "attention", "--yes"], ["reset", "attention", "--yes"], ["quiz", "--json"], ["--help"]])
def test_commands_outside_watch_drill_and_check_never_import_torch(workspace, command):
    proc = _importtime(command, workspace)
    imported = {line.split("|")[-1].strip() for line in proc.stderr.splitlines() if line.startswith("import time:")}
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert "torch" not in imported and "numpy" not in imported


def _importtime(command, ws):
    import os
    import subprocess

    args = command if command == ["--help"] else [*command, "--workspace", str(ws)]
    env = {**os.environ, "NO_COLOR": "1", "KATA_WORKSPACE": ""}
    return subprocess.run([sys.executable, "-X", "importtime", "-m", "checker", *args], capture_output=True,
                          text=True, env=env, timeout=60)


# ----------------------------------------------------------------------------- the history model, on rows made by hand

NOW = datetime(2025, 6, 1, 12, 0, tzinfo=timezone.utc)


def _at(minutes_ago: float) -> str:
    return (NOW - timedelta(minutes=minutes_ago)).isoformat(timespec="seconds")


def _check(kata, minutes_ago, status, stage=None, drill=None, elapsed=None):
    return {"kata": kata, "at": _at(minutes_ago), "status": status, "stage": stage, "drill": drill, "elapsed": elapsed}


def _event(kata, minutes_ago, kind, drill=None):
    return {"kata": kata, "at": _at(minutes_ago), "kind": kind, "drill": drill}


def _drill(id, katas, minutes_ago, end_reason=None, preset="attention-core"):
    return {"id": id, "preset": preset, "katas": katas, "folder": f"d{id}", "started_at": _at(minutes_ago),
            "minutes": 30, "allow_hints": 1, "end_reason": end_reason}


def test_a_round_starts_at_a_reset_a_drill_or_the_first_check_and_times_green_from_there():
    from checker.state.history import Records, rounds

    records = Records(
        checks=[_check("attention", 110, "fail", "shapes"),  # before any reset: the round starts here
                _check("attention", 100, "pass", "hygiene"),
                _check("attention", 50, "fail", "shapes"), _check("attention", 40, "pass", "hygiene"),
                _check("attention", 28, "pass", "hygiene", drill=1, elapsed=120.0)],
        events=[_event("attention", 60, "reset"), _event("attention", 45, "hint")],
        drills=[_drill(1, "attention", 30)])
    first, after_reset, drilled = rounds(records)
    assert first.green == 10 * 60 and first.passes == 1, "outside a drill, from the kata's first check"
    assert after_reset.green == 20 * 60 and after_reset.tries_to_green == 2 and after_reset.hints == 1
    assert after_reset.stage == "hygiene" and drilled.green == 120.0, "in a drill: the elapsed time it recorded"


def test_a_drill_without_an_end_is_killed_unless_it_is_running_and_scores_what_it_recorded():
    from checker.state.history import Records, drill_report

    checks = [_check("attention", 50, "pass", "hygiene", drill=1, elapsed=900.0),
              _check("attention", 15, "fail", "masking", drill=2, elapsed=300.0)]
    drills = [_drill(1, "attention", 60, "time"), _drill(2, "attention", 20)]
    report = drill_report(Records(checks, [], drills), 2)
    assert report["end"] == "killed" and report["score"] == 30, "masking reached: 10 per stage"
    assert report["earlier"] == {"count": 1, "scores": [85], "last": 85, "best": 85}, "green at half time: 70 + 15"
    assert drill_report(Records(checks, [], drills, running=2), 2)["end"] == "running"


def test_suggestions_are_work_in_progress_then_due_reviews_then_new_katas_then_reviews_not_due():
    from checker.catalogue import Kata
    from checker.state.history import Records, suggestions

    katas = tuple(Kata(name, "torch", name.title(), 1, (), (), i) for i, name in enumerate("abcde"))
    day = 24 * 60
    checks = [_check("a", 4 * day, "pass", "hygiene"),  # passed easily once: due 3 days later
              _check("b", 10, "fail", "shapes"),  # work in progress
              _check("c", 10, "pass", "hygiene"),  # just now: not due yet
              _check("d", 5 * day, "pass", "hygiene")]  # more overdue than a
    picks = suggestions(Records(checks, [], []), katas, "en", NOW)
    assert [(p["name"], p["kind"]) for p in picks] == [
        ("b", "continue"), ("d", "review"), ("a", "review"), ("e", "new"), ("c", "review")]
    assert picks[1]["reason"] == "review: passed 5 days ago, due again" and picks[-1]["due_in_days"] > 0


def test_the_history_model_imports_no_drawing_and_no_torch():
    import subprocess

    code = "import sys, checker.state.history; print(sorted({m.split('.')[0] for m in sys.modules} & {'rich', 'torch', 'numpy'}))"
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=60)
    assert proc.stdout.strip() == "[]", proc.stderr


def test_a_green_kata_with_open_follow_ups_scores_slightly_below_a_clean_one():
    from checker.state.history import FOLLOWUP_COST, Records, drill_report

    clean = _check("attention", 50, "pass", "hygiene", drill=1, elapsed=900.0)
    asked = {**_check("attention", 20, "pass", "hygiene", drill=2, elapsed=900.0), "followups": 1}
    drills = [_drill(1, "attention", 60, "time"), _drill(2, "attention", 30, "time")]
    report = drill_report(Records([clean, asked], [], drills), 2)
    assert report["earlier"]["last"] == 85 and report["score"] == 85 - FOLLOWUP_COST
    answered = {**_check("attention", 10, "pass", "hygiene", drill=2, elapsed=1000.0), "followups": 0}
    assert drill_report(Records([clean, asked, answered], [], drills), 2)["score"] == 85, \
        "the last pass counts: follow-ups answered later cost nothing"


ZH_LOCALE = {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "LC_MESSAGES": "", "KATA_LANG": ""}
CHINESE_BY = ({"args": ["--lang", "zh"], "env": {}}, {"args": [], "env": ZH_LOCALE})  # --lang, or the locale alone


@pytest.mark.parametrize("how", CHINESE_BY, ids=("lang", "locale"))
def test_solution_gives_its_numbered_steps_in_chinese(workspace, how):
    import re

    out = run_kata("solution", "encoder_layer", "--yes", "--workspace", workspace, *how["args"],
                   env={"COLUMNS": "80", **how["env"]}).stdout
    why = out.split("为什么这样写")[1].split("它避开的易错点")[0]
    assert "EncoderLayer.forward:" in why and "1) 自注意力" in why and "3) 拼接各个头" in why, why
    assert not re.search(r"[a-z]{3,} [a-z]{3,} [a-z]{3,}", why), f"an English step is left: {why}"


def _fits_80_columns(text):
    from rich.cells import cell_len

    assert "…" not in text, f"cut with an ellipsis:\n{text}"
    assert all(cell_len(line.rstrip()) <= 80 for line in text.splitlines()), f"wider than 80 columns:\n{text}"


def test_stats_next_hint_and_list_fit_80_columns_in_both_languages_and_best_means_one_thing(workspace):
    mine = workspace / "torch" / "attention.py"
    mine.write_text(SOLUTION.replace("/ math.sqrt(d_k)", ""))
    run_kata("check", "attention", "--workspace", workspace)  # outside a drill, no reset: the round starts here
    mine.write_text(SOLUTION)
    run_kata("check", "attention", "numpy/multi_head_attention", "--workspace", workspace)  # a long name, a stub
    for _ in range(3):
        run_kata("hint", "attention", "--workspace", workspace)
    ways = {"en": {"args": ["--lang", "en"], "env": {}}, "zh": CHINESE_BY[0], "zh (locale)": CHINESE_BY[1]}
    words = {"en": ("to green", "run time"), "zh": ("通过用时", "运行耗时")}
    for way, how in ways.items():
        out = {command: run_kata(command, *extra, "--workspace", workspace, *how["args"],
                                 env={"COLUMNS": "80", **how["env"]}).stdout
               for command, extra in (("stats", ()), ("next", ()), ("hint", ("multi_head_attention",)), ("list", ()))}
        for text in out.values():
            _fits_80_columns(text)
        to_green, run_time = words[way[:2]]
        assert to_green in out["stats"] and run_time not in out["stats"] and "best" not in out["stats"], out["stats"]
        assert run_time in out["list"] and to_green not in out["list"] and "best" not in out["list"], out["list"]
        assert "numpy/multi_head_attention" in out["stats"], "a long kata name keeps its line"
        if way.startswith("zh"):
            assert "现在练什么" in out["next"] and "数值稳定的 softmax" in out["next"] and "新练习" in out["next"]
            assert "次数" in out["stats"] and "提示 1/3" in out["hint"] and "缩放点积注意力" in out["list"]
    row = _stats(workspace, "attention")
    assert row["best_seconds_to_green"] is not None, "solved outside a drill: timed from the kata's first check"


def test_list_says_when_a_file_changed_since_its_last_check(workspace):
    mine = workspace / "torch" / "attention.py"
    mine.write_text(SOLUTION)
    run_kata("check", "attention", "numpy/softmax", "--workspace", workspace)

    def changed():
        _, doc = run_json("list", "--workspace", workspace)
        return {k["name"]: k["changed_since_check"] for k in doc["katas"]}

    assert changed()["attention"] is False and changed()["numpy/softmax"] is False
    assert "* =" not in run_kata("list", "--workspace", workspace).stdout, "no legend for a mark not shown"
    mine.write_text(SOLUTION + "\n# tidied\n")
    assert changed()["attention"] is True and changed()["numpy/softmax"] is False and changed()["rope"] is False
    text = run_kata("list", "--workspace", workspace, "--lang", "zh").stdout
    row = next(line for line in text.splitlines() if " attention " in line)
    assert "通过 *" in row and "* = 上次检查之后文件改过" in _flat(text).replace(" ", " "), text


@pytest.mark.parametrize("lang, words", [("en", ("to green", "masking", "+ sol.", "vs last")),
                                         ("zh", ("通过用时", "掩码", "+ 答案", "比上次", "自选"))])
def test_the_drill_report_fits_80_columns_and_speaks_the_language_of_the_drill(lang, words):
    import io

    from rich.console import Console

    from checker.state.history import Records, drill_report
    from checker.app.practice import print_drill_report

    names = "numpy/multi_head_attention numpy/positional_encoding grouped_query_attention"
    checks = [_check("numpy/multi_head_attention", 50, "pass", "hygiene", drill=1, elapsed=900.0),
              _check("numpy/positional_encoding", 15, "fail", "masking", drill=2, elapsed=300.0)]
    events = [_event("grouped_query_attention", 14, "solution", drill=2)]
    drills = [_drill(1, names, 60, "time", preset="custom"), _drill(2, names, 20, "quit", preset="custom")]
    console = Console(width=80, file=io.StringIO(), no_color=True)
    print_drill_report(console, drill_report(Records(checks, events, drills), 2), lang)
    text = console.file.getvalue()
    _fits_80_columns(text)
    assert all(word in text for word in words), text
    assert "numpy/multi_head_attention  " in text, "a kata name keeps its line; the other columns wrap first"
