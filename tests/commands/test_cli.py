"""The real `kata` command in a subprocess, as a user runs it."""

import json
import os
import textwrap

from checker import catalogue
from conftest import ROOT, run_json, run_kata, variant

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")


def _write(ws, kata_file, text):
    (ws / kata_file).write_text(textwrap.dedent(text), encoding="utf-8")


def test_fresh_workspace_reports_not_started_with_the_path(workspace):
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 1
    (kata,) = doc["katas"]
    assert kata["status"] == "not_started"
    assert kata["file"] == str(workspace / "torch" / "attention.py")
    assert {"name", "track", "file", "status", "seconds", "checks", "diagnosis"} <= set(kata)
    assert all({"name", "stage", "status", "message", "diagnosis", "line"} <= set(c) for c in kata["checks"])


def test_reference_pasted_into_the_workspace_passes(workspace):
    _write(workspace, "torch/attention.py", SOLUTION)
    proc = run_kata("check", "attention", "--workspace", workspace)
    assert proc.returncode == 0, proc.stdout
    assert "PASS" in proc.stdout


def test_missing_scale_fails_and_says_what_is_wrong(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("/ math.sqrt(d_k)", ""))
    proc = run_kata("check", "attention", "--workspace", workspace)
    assert proc.returncode == 1
    assert "FAIL" in proc.stdout and "1/√d_k" in proc.stdout
    _, doc = run_json("check", "attention", "--workspace", workspace)
    assert "√d_k" in doc["katas"][0]["diagnosis"]


def test_json_is_the_only_thing_on_stdout_even_when_user_code_prints(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("d_k = Q.size(-1)", "d_k = Q.size(-1); print('[debug] hi')"))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 0
    assert "[debug] hi" in doc["katas"][0]["output"]


def test_each_check_has_an_english_id_in_every_language_and_its_own_diagnosis(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("/ math.sqrt(d_k)", ""))
    ids = {}
    for lang in ("en", "zh"):
        proc, doc = run_json("check", "attention", "--lang", lang, "--workspace", workspace)
        checks = doc["katas"][0]["checks"]
        ids[lang] = [c["id"] for c in checks]
        failed = next(c for c in checks if c["id"] == "numerics: matches the reference in float64")
        assert failed["status"] not in ("pass", "followup") and failed["diagnosis"] and failed["diagnosis"] not in failed["message"]
        assert all(c["diagnosis"] is None for c in checks if c["status"] in ("pass", "followup"))
    assert ids["en"] == ids["zh"] and all(i.isascii() for i in ids["zh"] if "√" not in i)
    assert ids["zh"] != [c["name"] for c in doc["katas"][0]["checks"]], "names are translated, ids are not"


def test_syntax_error_names_file_and_line(workspace):
    _write(workspace, "torch/attention.py", "import torch\n\ndef broken(:\n    pass\n")
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 1
    kata = doc["katas"][0]
    assert kata["status"] == "error"
    assert "line 3" in kata["error"] and "attention.py" in kata["error"]


def test_misnamed_class_is_named_in_the_message(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("class ScaledDotProductAttention", "class ScaledDotProductAtention"))
    _, doc = run_json("check", "attention", "--workspace", workspace)
    structure = doc["katas"][0]["checks"][0]
    assert structure["status"] not in ("pass", "followup") and "ScaledDotProductAtention" in structure["message"]
    assert "misname" in structure["message"]


def test_endless_loop_times_out(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("d_k = Q.size(-1)", "while True: pass"))
    proc, doc = run_json("check", "attention", "--workspace", workspace, "--timeout", "1")
    assert proc.returncode == 1
    kata = doc["katas"][0]
    assert kata["status"] == "timeout"
    assert any("timed out after 1 s" in c["message"] for c in kata["checks"])


def test_user_exception_shows_their_own_frame(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("d_k = Q.size(-1)", "d_k = Q.size(-1); Q.foo()"))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    kata = doc["katas"][0]
    assert kata["status"] == "fail"
    assert "attention.py" in kata["error"] and "AttributeError" in kata["error"]
    assert "checker" not in kata["error"], "the checker's own frames are hidden"


def test_crash_of_the_child_is_a_verdict(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("d_k = Q.size(-1)", "import os; os._exit(3)"))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 1
    assert doc["katas"][0]["status"] == "error"
    assert any("exited with status 3" in c["message"] for c in doc["katas"][0]["checks"])


def test_unknown_kata_is_a_usage_error_with_suggestions(workspace):
    proc = run_kata("check", "attentoin", "--workspace", workspace)
    assert proc.returncode == 2
    assert "attention" in proc.stderr and "Did you mean" in proc.stderr


def test_missing_workspace_is_a_usage_error(tmp_path):
    proc = run_kata("check", "attention", "--workspace", tmp_path / "nope")
    assert proc.returncode == 2 and "kata init" in proc.stderr


def test_workspace_found_from_variable_then_current_folder(workspace, tmp_path):
    _write(workspace, "torch/attention.py", SOLUTION)
    assert run_kata("check", "attention", env={"KATA_WORKSPACE": str(workspace)}).returncode == 0
    assert run_kata("check", "attention", cwd=workspace / "torch").returncode == 0


def test_default_workspace_is_created_on_first_use(tmp_path):
    env = {"XDG_DATA_HOME": str(tmp_path / "data"), "KATA_WORKSPACE": ""}
    proc = run_kata("check", "attention", "--json", cwd=tmp_path, env=env)
    assert proc.returncode == 1
    assert json.loads(proc.stdout)["katas"][0]["status"] == "not_started"
    assert "Created your workspace" in proc.stderr
    assert (tmp_path / "data" / "kata" / "workspace" / "torch" / "attention.py").is_file()


def test_init_never_overwrites_the_users_work(workspace):
    _write(workspace, "torch/attention.py", "# my work\n")
    (workspace / "numpy" / "softmax.py").unlink()
    proc = run_kata("init", workspace)
    assert proc.returncode == 0
    assert (workspace / "torch" / "attention.py").read_text() == "# my work\n"
    assert (workspace / "numpy" / "softmax.py").is_file()


def test_list_shows_the_path_and_records_progress(workspace):
    _write(workspace, "torch/attention.py", SOLUTION)
    run_kata("check", "attention", "--workspace", workspace)
    proc, doc = run_json("list", "--workspace", workspace)
    assert proc.returncode == 0
    rows = {k["name"]: k for k in doc["katas"]}
    assert rows["attention"]["status"] == "pass" and rows["numpy/softmax"]["status"] == "not_started"
    assert {"name", "track", "title", "difficulty", "status"} <= set(rows["attention"])
    groups = [(k["part"], k["track"]) for k in doc["katas"]]
    assert groups[0] == ("seeds", "numpy") and groups[-1][0] == catalogue.PARTS[-1], "the seeds' katas first, the last set last"
    parts = [part for part, _ in groups]
    assert parts == sorted(parts, key=catalogue.PARTS.index), "the parts in learning order"
    runs = [g for i, g in enumerate(groups) if i == 0 or g != groups[i - 1]]
    assert len(runs) == len(set(runs)), "each (part, track) group in one piece"
    assert "attention" in run_kata("list", "--workspace", workspace).stdout


def test_show_prints_the_statement_but_not_the_hint_ladder(workspace):
    from checker.app.statement import hints

    near_code = hints(catalogue.find("attention"), "en")[-1][:40]
    proc = run_kata("show", "attention", "--lang", "en", "--workspace", workspace)
    assert proc.returncode == 0 and "softmax" in proc.stdout and "kata hint attention" in proc.stdout
    assert near_code not in " ".join(proc.stdout.split()), "kata show gave away the near-code hint"
    assert "no hint" in run_kata("show", "attention", "--hints", "--workspace", workspace).stdout
    run_kata("hint", "attention", "--workspace", workspace)
    taken = run_kata("show", "attention", "--hints", "--workspace", workspace).stdout
    assert "(1 of 3)" in taken and near_code not in " ".join(taken.split())


def test_help_documents_the_exit_codes():
    proc = run_kata("--help")
    assert proc.returncode == 0 and "exit status" in proc.stdout and "130" in proc.stdout
    assert run_kata("check", "--help").returncode == 0
    assert run_kata("chek").returncode == 2


def test_solutions_pass_through_the_cli_with_every_title_in_chinese():
    """A module kata, a function kata, a NumPy kata and a composite, in the catalogue's order (every
    solution is checked, and its titles drawn in Chinese, by tests/checks/test_catalogue.py)."""
    import re

    names = ["numpy/softmax", "attention", "layer_norm", "encoder_layer"]
    proc, doc = run_json("check", *names, "--solution", "--lang", "zh")
    assert proc.returncode == 0, [k["name"] for k in doc["katas"] if k["status"] != "pass"]
    assert [k["name"] for k in doc["katas"]] == names
    english = [c["name"] for k in doc["katas"] for c in k["checks"]
               if not re.search(r"[\u4e00-\u9fff]", c["name"].split("：", 1)[-1])]
    assert not english, english


def test_tutorial_code_passes_with_a_follow_up_and_strict_fails_it(workspace):
    """Seed 003's attention: -inf fill, no guard for a query that sees no key."""
    _write(workspace, "torch/attention.py", variant("torch_attention", "right_seed003_nan_rows").read_text())
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    assert proc.returncode == 0, proc.stdout
    (kata,) = doc["katas"]
    assert kata["status"] == "pass"
    assert [f["kind"] for f in kata["followups"]] == ["followup"] and "NaN" in kata["followups"][0]["message"]
    text = run_kata("check", "attention", "--workspace", workspace).stdout
    assert "follow-up:" in text and "--strict" in text
    listing = run_kata("list", "--workspace", workspace).stdout
    assert "PASS ?" in listing
    rows = {r["name"]: r for r in run_json("list", "--workspace", workspace)[1]["katas"]}
    assert rows["attention"]["followups"] == 1 and rows["attention"]["status"] == "pass"
    strict, doc = run_json("check", "attention", "--workspace", workspace, "--strict")
    assert strict.returncode == 1 and doc["katas"][0]["status"] == "fail"


FORBIDDEN = '''import math

import torch.nn.functional as F
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout=0.0):
        super().__init__()
        self.p = dropout

    def forward(self, Q, K, V, mask=None):
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
        weights = (Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))).masked_fill(~mask, float("-inf")).softmax(-1)
        return out, weights.nan_to_num()
'''


def test_a_forbidden_call_carries_its_line_in_the_json_and_in_the_problems_format(workspace):
    _write(workspace, "torch/attention.py", FORBIDDEN)
    _, doc = run_json("check", "attention", "--workspace", workspace)
    lines = {c["name"]: c["line"] for c in doc["katas"][0]["checks"] if c["status"] not in ("pass", "followup")}
    assert lines and all(line == 13 for name, line in lines.items() if "off-limits" in name), lines
    proc = run_kata("check", "attention", "--workspace", workspace, "--format", "problems")
    assert proc.returncode == 1
    path = str(workspace / "torch" / "attention.py")
    found = [line for line in proc.stdout.splitlines() if "scaled_dot_product_attention" in line]
    column = len("        out = F.") + 1  # the column of the off-limits name itself, where an editor puts its mark
    assert found and all(line.startswith(f"{path}:13:{column}: error: hygiene: ") for line in found), proc.stdout
    text = run_kata("check", "attention", "--workspace", workspace).stdout
    assert "→ line 13: out = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)" in text, text


def test_the_report_shows_the_line_of_an_extra_sublayer_call_in_both_languages(workspace):
    _write(workspace, "torch/add_norm.py",
           variant("torch_add_norm", "wrong_sublayer_called_twice").read_text(encoding="utf-8"))
    proc = run_kata("check", "add_norm", "--workspace", workspace)
    assert proc.returncode == 1
    assert "→ line 19: out = x + self.dropout(sublayer(h))" in proc.stdout, proc.stdout
    assert "the extra call is on line 19" in " ".join(proc.stdout.split()), proc.stdout
    zh = run_kata("check", "add_norm", "--workspace", workspace, "--lang", "zh").stdout
    assert "→ 第 19 行：out = x + self.dropout(sublayer(h))" in zh, zh


def test_problems_format_gives_the_line_of_an_exception_and_warns_about_a_follow_up(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("d_k = Q.size(-1)", "d_k = Q.size(-1)\n        1 / 0", 1))
    out = run_kata("check", "attention", "--workspace", workspace, "--format", "problems").stdout
    assert any(": error: " in line and "ZeroDivisionError" in line for line in out.splitlines()), out
    line = next(l for l in out.splitlines() if "ZeroDivisionError" in l)
    assert int(line.split(":")[1]) > 1, "the line of the 1 / 0"
    _write(workspace, "torch/attention.py", variant("torch_attention", "right_seed003_nan_rows").read_text())
    out = run_kata("check", "attention", "--workspace", workspace, "--format", "problems").stdout
    assert [l for l in out.splitlines() if ": warning: masking: " in l and "NaN" in l], out


def test_completion_scripts_name_the_commands_and_the_katas():
    for shell in ("bash", "zsh", "fish"):
        proc = run_kata("completion", shell)
        assert proc.returncode == 0 and "grouped_query_attention" in proc.stdout and "--strict" in proc.stdout.replace(
            "-l strict", "--strict")
    script = run_kata("completion", "bash").stdout
    import subprocess

    done = subprocess.run(["bash", "-c", script + "\nCOMP_WORDS=(kata check grouped_q); COMP_CWORD=2; _kata; "
                           "echo \"${COMPREPLY[@]}\""], capture_output=True, text=True)
    assert done.stdout.split() == ["grouped_query_attention"], done


CJK = "[\u4e00-\u9fff]"


def test_usage_errors_and_help_speak_chinese_when_chosen_and_exit_2():
    import re

    from rich.cells import cell_len

    proc = run_kata("check", "attention", "--bogus", "--lang", "zh")
    assert proc.returncode == 2 and "用法：" in proc.stderr and "无法识别的参数：--bogus" in proc.stderr, proc.stderr
    proc = run_kata("reset", "--lang", "zh")  # kata's own usage errors too
    assert proc.returncode == 2 and "请指定要重置的练习" in proc.stderr, proc.stderr
    proc = run_kata("list", "--lang", "fr", env={"KATA_LANG": "zh"})
    assert proc.returncode == 2 and "无效的选择" in proc.stderr and "usage" not in proc.stderr
    zh_locale = {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "KATA_LANG": "", "COLUMNS": "80"}
    for args in (("check", "--help"), ("--help",), ("stats", "--help")):
        text = run_kata(*args, env=zh_locale).stdout
        assert "用法：" in text and "退出状态" in text and "options" not in text, text
        assert all(cell_len(line) <= 80 for line in text.splitlines()), "Chinese help wraps by cells"
    english = run_kata("check", "attention", "--bogus", env={"KATA_LANG": "en"})
    assert english.returncode == 2 and "usage:" in english.stderr and not re.search(CJK, english.stderr)


def test_every_help_string_of_every_command_has_chinese():
    import argparse
    import re

    from checker.app.cli import _argparse_speaking, build_parser
    from checker.lang import speaking

    with speaking("zh"), _argparse_speaking():
        parser = build_parser()
    commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = [(None, a.help) for a in parser._actions if a.help not in (None, argparse.SUPPRESS)]
    helps += [(name, a.help) for name, p in commands.choices.items() for a in p._actions
              if a.help not in (None, argparse.SUPPRESS) and a.dest != "help"]
    helps += [(a.dest, a.help) for a in commands._choices_actions]
    english = [(name, text) for name, text in helps if not re.search(CJK, text)]
    assert not english, english


def test_progress_lines_only_on_a_terminal():
    """Piped: never a "checking NAME ..." line (nor a carriage return) in the report; on a terminal, one per kata."""
    proc = run_kata("check", "attention", "numpy/softmax", "rms_norm", "dropout", "--solution")
    assert proc.returncode == 0 and "checking " not in proc.stdout + proc.stderr and "\r" not in proc.stdout
    assert "Summary" in proc.stdout
    import pty
    import subprocess
    import sys

    main, child = pty.openpty()
    env = {**os.environ, "COLUMNS": "80", "KATA_WORKSPACE": ""}
    kata = subprocess.Popen([sys.executable, "-m", "checker", "check", "attention", "numpy/softmax", "--solution"],
                            stdout=child, stderr=child, env=env)
    os.close(child)
    seen = b""
    while True:  # read as it comes, so the child never blocks on a full terminal
        try:
            chunk = os.read(main, 65536)
        except OSError:  # the child has closed its end
            break
        if not chunk:
            break
        seen += chunk
    os.close(main)
    assert kata.wait(timeout=300) == 0 and b"checking attention" in seen and b"\r" in seen
