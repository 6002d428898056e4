"""One mistake, one message (issue 26): a crash is a failure shown once, follow-up questions wait until the core
checks pass, the stage reached is one of the kata's own, and a check never blames the user for what it asked."""

import re
import shutil

from conftest import ROOT, run_json, run_kata, variant

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")


def _write(workspace, name: str, source: str) -> None:
    (workspace / name).write_text(source, encoding="utf-8")


def test_a_crash_is_one_failure_with_its_line_and_the_checks_it_stops_say_so(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("d_k = Q.size(-1)", "d_k = Q.size(-1) + undefined", 1))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    (kata,) = doc["katas"]
    raised = [c for c in kata["checks"] if "NameError" in c["message"] and c["status"] != "skipped"]
    assert len(raised) == 1 and raised[0]["line"] and raised[0]["status"] not in ("pass", "followup"), kata["checks"]
    stopped = [c for c in kata["checks"] if c["status"] == "skipped" and "same error" in c["message"]]
    assert stopped and all(raised[0]["name"].split(": ", 1)[1] in c["message"] for c in stopped)
    assert kata["followups"] == [], "a crash is never a follow-up"
    problems = run_kata("check", "attention", "--workspace", workspace, "--format", "problems").stdout.splitlines()
    assert len(problems) == 1 and ": error: " in problems[0] and "NameError" in problems[0], problems
    panel = run_kata("check", "attention", "--workspace", workspace, "--lang", "zh").stdout
    assert panel.count("NameError: name 'undefined'") == 2, "once as the failure, once in the traceback"
    assert "可以接受" not in panel and "追问" not in panel


def test_a_crash_on_an_edge_case_alone_is_a_failure_not_a_question(workspace):
    """A file right on every ordinary case that raises where a query sees no key (the follow-up's edge)."""
    crash = "        if mask is not None and not mask.any(-1).all():\n            raise ValueError('a row with no key')\n"
    _write(workspace, "torch/attention.py", SOLUTION.replace("        d_k = Q.size(-1)\n", crash + "        d_k = Q.size(-1)\n", 1))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    (kata,) = doc["katas"]
    assert proc.returncode == 1 and kata["status"] == "fail", kata
    failed = [c for c in kata["checks"] if c["status"] in ("fail", "error")]
    assert failed and all(c["kind"] == "core" and "edge case" in c["message"] for c in failed), failed


def test_follow_ups_wait_until_the_core_checks_pass(workspace):
    """An inverted mask fails the masking checks; the question about a query that sees no key is not asked."""
    _write(workspace, "torch/attention.py", SOLUTION.replace("masked_fill(~mask", "masked_fill(mask"))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    (kata,) = doc["katas"]
    assert kata["status"] == "fail" and kata["followups"] == [], kata["followups"]
    waiting = [c for c in kata["checks"] if c["kind"] != "core" and c["status"] == "skipped"]
    assert waiting and all("not asked until" in c["message"] for c in waiting)
    problems = run_kata("check", "attention", "--workspace", workspace, "--format", "problems").stdout
    assert ": warning: " not in problems, problems


def test_the_stage_reached_is_one_of_the_katas_own(workspace):
    """rms_norm has no masking stage: a numeric failure there reached 'shapes', never 'masking'."""
    source = (ROOT / "solutions" / "torch" / "rms_norm.py").read_text(encoding="utf-8")
    _write(workspace, "torch/rms_norm.py", source.replace("h.pow(2).mean(dim=-1, keepdim=True)", "h.pow(2).mean(dim=-1, keepdim=True) * 1.5"))
    proc, doc = run_json("check", "rms_norm", "--workspace", workspace)
    (kata,) = doc["katas"]
    stages = {c["stage"] for c in kata["checks"]}
    assert kata["status"] == "fail" and "masking" not in stages and kata["stage"] in stages, (kata["stage"], stages)


def test_fewer_float_outputs_than_the_gradient_check_follows_is_said_as_what_was_returned(workspace):
    _write(workspace, "torch/attention.py", SOLUTION.replace("return out, weights", "return out, weights > 0.5", 1))
    proc, doc = run_json("check", "attention", "--workspace", workspace)
    (kata,) = doc["katas"]
    gradient = next(c for c in kata["checks"] if c["stage"] == "gradients")
    assert "your code returned 1" in gradient["message"] and "raised" not in gradient["message"], gradient


def test_the_problems_format_lists_one_line_per_distinct_problem(workspace):
    """A missing scale fails float64 and float32 with the same message: one line for the editor, not two."""
    _write(workspace, "torch/attention.py", SOLUTION.replace(" / math.sqrt(d_k)", "", 1))
    lines = run_kata("check", "attention", "--workspace", workspace, "--format", "problems").stdout.splitlines()
    messages = [line.split(": ", 3)[-1] for line in lines]
    assert lines and len(messages) == len(set(messages)), lines


def test_the_problems_format_places_a_failure_where_the_report_knows_its_line(workspace):
    """norm1 used twice (line 89): the diagnosis names the mistake and the first divergence finds its line, so the
    numeric failures, which cannot place themselves, point there too, at the column the code begins; and a check
    whose message names the line the code raised on (line 27) points at it."""
    shutil.copyfile(variant("torch_encoder_layer", "wrong_norm1_twice"), workspace / "torch" / "encoder_layer.py")
    shutil.copyfile(variant("torch_positional_encoding", "wrong_batch_axis_as_length"),
                    workspace / "torch" / "positional_encoding.py")
    proc = run_kata("check", "encoder_layer", "positional_encoding", "--workspace", workspace, "--format", "problems")
    lines = proc.stdout.splitlines()
    assert proc.returncode == 1 and lines, proc.stderr
    places = {re.match(r"(.+?):(\d+):(\d+): ", line).groups() for line in lines}  # C:\... on Windows too
    assert places == {(str(workspace / "torch" / "encoder_layer.py"), "89", "9"),
                      (str(workspace / "torch" / "positional_encoding.py"), "27", "9")}, lines
    assert any(": numerics: " in line and "encoder_layer.py:89:" in line for line in lines), lines
    messages = [line.split(": ", 3)[-1] for line in lines]
    assert len(messages) == len(set(messages)), "one line per distinct problem"
