"""A report for one mistake fits in 40 lines at 80 columns, in Chinese and in English (issue 26).

Each wrong variant holds one mistake. Of each kata, the variant in the middle of its wrong variants by name (a fixed
rule; tests/commands/test_chinese_reports.py holds the last through the command line, test_server.py the first) has
its report drawn as `kata check` draws it at 80 columns, in both languages, where tests/checks/test_variants.py checks
it (report_reading.held_to_40_lines), so that it is checked once. bench/reports.py measures every wrong variant
(806: none over 40 lines; 84 were before, the longest 79). The tests here hold how a report is made short.

How a report stays short without hiding the mistake: a crash is shown once and the checks it stops say so; a
failure saying what an earlier one said but for its numbers folds into it; the traceback loses its repeated
frames, the comments of the lines it quotes and, when deep, its middle; and a report still too long says its last
failures in one line (--verbose lists them all)."""

import io

from rich.console import Console

from checker.app.report import MOST_LINES, _traceback, kata_panel
from checker.results import CheckResult, KataResult


def _drawn(result, width=80, verbose=False) -> str:
    out = io.StringIO()
    Console(file=out, width=width, no_color=True, highlight=False).print(kata_panel(result, verbose=verbose))
    return out.getvalue()


def test_a_report_too_long_says_its_last_failures_in_one_line_and_verbose_lists_them():
    failures = [CheckResult(f"numerics: property {i}", "numerics", "fail", f"case {i}: " + "the values differ " * 12)
                for i in range(12)]
    result = KataResult("attention", "torch", "/ws/torch/attention.py", "fail", checks=failures,
                        diagnosis="your scores are not scaled")
    short, full = _drawn(result), _drawn(result, verbose=True)
    assert len(short.splitlines()) <= MOST_LINES < len(full.splitlines())
    assert "property 0" in short and "more checks fail too (--verbose shows them)" in short
    assert "your scores are not scaled" in short, "the diagnosis is never folded"
    assert all(f"property {i}" in full for i in range(12))
    wide = _drawn(result, width=200)  # the same report fits with fewer folded at a wider terminal
    assert wide.count("property") > short.count("property")


def test_a_traceback_keeps_where_the_code_begins_and_where_it_raised():
    frames = "".join(f'  File "/ws/torch/attention.py", line {10 + i}, in step{i}\n    h = step{i + 1}(h)  # go on\n'
                     for i in range(7))
    repeated = '  File "/ws/torch/attention.py", line 30, in <listcomp>\n    h = [f(x) for x in h]\n' * 3
    shown = _traceback(f"Traceback (most recent call last):\n{frames}{repeated}    ^^^^^^\nValueError: bad\n",
                       "/ws/torch/attention.py").splitlines()
    assert shown[0] == "Traceback (most recent call last):" and shown[-1] == "ValueError: bad"
    assert shown[1] == '  File "attention.py", line 10, in step0' and "h = step1(h)" == shown[2].strip()
    assert "frames between them left out" in shown[3]
    assert shown[-3:-1] == ['  File "attention.py", line 30, in <listcomp>', "    h = [f(x) for x in h]"]
    assert not any("# go on" in line or "^^^" in line for line in shown)
