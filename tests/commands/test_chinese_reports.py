"""Every word of a Chinese report is Chinese (issue 26): a wrong file of every kata, checked with `--lang zh` at
80 columns as a learner runs it, gives a report whose ASCII words are all code, names or numbers. What counts as
code, a name or a number is tests/commands/report_reading.py's (english_words): code spans, tracebacks, quoted
data, expressions, identifiers of the kata's stub, reference and the user's file, shape notation, dtypes, the
names of torch's and NumPy's functions, and short lists of names and of terms the Chinese tutorials write in
English (softmax, dropout, token), each with its reason. bench/reports.py applies the same rule to every wrong
variant (806 of them): 0 English words, 665 before this test.

The sample is fixed, not chosen: of each kata, its first wrong variant and its last, by name. One workspace holds
one of them per kata, and one `kata check --all` checks them all (about 30 s); the two run side by side under -n 2
in about 60 s. Each report is held to MOST_LINES too, as tests/commands/test_report_length.py holds others."""

import shutil

import pytest
from conftest import run_kata
from report_reading import english_in, panels, wrong_variants

from checker import catalogue
from checker.app.report import MOST_LINES

SAMPLES = {"first": lambda variants: variants[0], "last": lambda variants: variants[-1]}


@pytest.mark.parametrize("sample", SAMPLES)
def test_a_chinese_report_holds_no_english_word_outside_code_names_and_numbers(sample, workspace):
    chosen = {}
    for kata in catalogue.all_katas():
        path = SAMPLES[sample](wrong_variants(kata))
        shutil.copyfile(path, workspace / kata.file)
        chosen[kata.id] = (kata, path)
    proc = run_kata("check", "--all", "--workspace", workspace, "--lang", "zh", env={"COLUMNS": "80"}, timeout=600)
    assert proc.returncode == 1, proc.stderr
    shown = panels(proc.stdout)
    assert set(shown) - {""} == set(chosen), "every kata has its report"
    leaks = []
    for name, text in shown.items():
        kata, path = chosen.get(name, (None, None))
        source = path.read_text(encoding="utf-8") if path else ""
        assert name == "" or "未通过" in text.splitlines()[0], f"{path.name} does not fail:\n{text}"
        assert name == "" or len(text.splitlines()) <= MOST_LINES, f"{path.name}: over {MOST_LINES} lines:\n{text}"
        leaks += [f"{name} ({path.name if path else 'summary'}): {word!r} in: {said}"
                  for word, said in english_in(text, kata, source)]
    assert not leaks, f"{len(leaks)} English word(s) in Chinese reports:\n" + "\n".join(leaks)


def test_the_rule_finds_english_where_there_is_some():
    """The rule itself: prose, a setting's word, glue between names are found; code, names and numbers are not."""
    report = "\n".join([
        "╭─  attention · 未通过 · 0.16 s  ─────╮",
        "│ /tmp/ws/torch/attention.py          │",
        "│  ✗ 数值：float64 下与参考答案一致   │",
        "│    第 1 组输入（B=2, T_q=5, mask=没有）：output：180 个元素中有 │",
        "│    180 个不同；得到 -0.16，应为 -0.78 and then some │",
        "│    rows=small, F.softmax(scores, dim=-1)，`kata check attention` │",
        "│    你的代码抛出了 RuntimeError: The size of tensor a (4) must │",
        "│    match the size of tensor b (6)（第 36 行） │",
        "│                                     │",
        "│ 你的代码抛出了：                    │",
        "│ Traceback (most recent call last):  │",
        "│ RuntimeError: The size of tensor a  │",
        "╰─────────────────────────────────────╯",
    ])
    kata = catalogue.find("attention")
    assert [w for w, _ in english_in(report, kata)] == ["and", "then", "some", "rows", "small"]
