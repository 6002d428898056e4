"""`kata check NAME --case N` prints a snippet a user can paste beside their own code, and it runs.

The snippet rebuilds the case (seeded inputs, the reference's weights), calls the user's target and
compares with the reference through the checks' own comparison. Every kata's snippet is run here
against its reference (it must say "matches") and against a wrong variant (it must say where).
"""

import json
import shutil
import subprocess
import sys
import textwrap

from conftest import ROOT, run_kata, variant

# Runs each snippet in a fresh namespace, in a folder holding only the file it imports, as a user would
# in a REPL opened beside their file; prints {kata: output} as JSON.
_RUNNER = textwrap.dedent("""
    import contextlib, io, json, os, sys
    from pathlib import Path
    out = {}
    for kata, folder, code in json.load(sys.stdin):
        os.chdir(folder)
        sys.path.insert(0, folder)
        buffer = io.StringIO()
        try:
            with contextlib.redirect_stdout(buffer):
                exec(compile(code, kata + " snippet", "exec"), {})
        except Exception as err:
            buffer.write(f"RAISED {type(err).__name__}: {err}")
        sys.path.remove(folder)
        for name in [n for n, m in sys.modules.items() if (getattr(m, "__file__", "") or "").startswith(folder)]:
            del sys.modules[name]
        out[kata] = buffer.getvalue()
    print(json.dumps(out))
""")


def _run_snippets(jobs):
    proc = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(jobs), capture_output=True,
                          text=True, cwd=ROOT, timeout=600)
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout)


def test_every_katas_snippet_runs_beside_the_reference_and_matches(tmp_path):
    import importlib

    from checker import catalogue, engine, kit
    from checker.catalogue import SOLUTIONS

    jobs, without_cases = [], []
    for kata in catalogue.all_katas():
        first = min(c.id for c in kit.options(importlib.import_module(kata.checks_module)).CASES)
        replay = engine.Replay(kata, first)
        folder = tmp_path / kata.id.replace("/", "_")
        folder.mkdir()
        shutil.copy(SOLUTIONS / kata.file, folder)
        jobs.append((kata.id, str(folder), replay.snippet()))
        if replay.expected is None:
            without_cases.append(kata.id)
    out = _run_snippets(jobs)
    raised = {k: v for k, v in out.items() if "RAISED" in v}
    assert not raised, raised
    compared = {k: v for k, v in out.items() if k not in without_cases}
    assert all("matches the reference" in v and "differ" not in v for v in compared.values()), compared
    assert not without_cases, f"snippets that cannot compare: {without_cases}"


def test_the_snippet_of_a_wrong_file_says_which_output_differs_and_where(tmp_path):
    from checker import engine

    wrong = variant("torch_multi_head_attention", "wrong_missing_scale")
    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(wrong, folder / "multi_head_attention.py")
    out = _run_snippets([("multi_head_attention", str(folder), engine.Replay("multi_head_attention", 3).snippet())])
    text = out["multi_head_attention"]
    assert "RAISED" not in text, text
    assert "out:" in text and "elements differ" in text and "largest difference" in text, text


def test_the_snippet_compares_plain_data_exactly_and_says_where_it_first_differs(tmp_path):
    from checker import engine

    folder = tmp_path / "ws"
    folder.mkdir()
    shutil.copy(variant("torch_bpe", "wrong_ties_largest_pair"), folder / "bpe.py")
    out = _run_snippets([("bpe", str(folder), engine.Replay("bpe", 1).snippet())])
    assert "RAISED" not in out["bpe"] and "differs from item" in out["bpe"], out["bpe"]


def test_kata_check_case_prints_the_snippet_in_the_chosen_language():
    proc = run_kata("check", "attention", "--case", "2")
    assert proc.returncode == 0, proc.stderr
    assert "from checker.engine import Replay" in proc.stdout
    assert "case = Replay('attention', 2)" in proc.stdout and "case.compare(got)" in proc.stdout
    zh = run_kata("check", "attention", "--case", "2", "--lang", "zh")
    assert "隐藏检查用的输入和权重" in zh.stdout and "case.compare(got)" in zh.stdout
    bad = run_kata("check", "attention", "--case", "99")
    assert bad.returncode == 2 and "there is no case 99" in bad.stderr


def test_every_case_number_a_report_can_name_means_one_case_and_case_answers_for_it():
    """A report labels a case by its number; `--case N` rebuilds that very case, or says that its one check
    builds it, never 'there is no case N' (kv_cache's reports named case 6 when --case knew 1 to 4)."""
    import importlib

    from checker import catalogue, engine, kit
    from checker.lang import read_catalogue

    for k in catalogue.all_katas():
        read_catalogue(k.checks_module)
        spec = importlib.import_module(k.checks_module)
        named: dict = {}
        for value in vars(spec).values():
            for c in value if isinstance(value, list | tuple) else (value,):
                if isinstance(c, kit.Case):
                    assert named.setdefault(c.id, c) == c, f"{k.id}: two different cases are both case {c.id}"
        for number in named:
            try:
                engine.Replay(k, number)
            except LookupError as err:
                assert "built by the one check" in str(err), f"{k.id} case {number}: {err}"
