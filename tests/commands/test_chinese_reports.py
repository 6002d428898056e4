"""Every word of a Chinese report is Chinese (issue 26): a wrong file of every kata, checked with `--lang zh` at
80 columns as a learner runs it, gives a report whose ASCII words are all code, names or numbers. What counts as
code, a name or a number is tests/report_reading.py's (english_words): code spans, tracebacks, quoted
data, expressions, identifiers of the kata's stub, reference and the user's file, shape notation, dtypes, the
names of torch's and NumPy's functions, and short lists of names and of terms the Chinese tutorials write in
English (softmax, dropout, token), each with its reason. bench/reports.py applies the same rule to every wrong
variant (806 of them): 0 English words, 665 before this test.

The sample is fixed, not chosen: of each kata, its last wrong variant by name here, in one workspace checked by
one `kata check --all` (about 30 s); its first (the first without torch.empty) in tests/commands/test_server.py,
whose cold check of every kata in Chinese is drawn as the terminal draws it at 80 columns and held to the same
rule (report_reading.held_to_chinese), rather than checked a third time. Each report is held to MOST_LINES too, as
tests/commands/test_report_length.py holds others."""

import shutil

from conftest import run_kata
from report_reading import english_in, held_to_chinese, panels, wrong_variants

from checker import catalogue


def test_a_chinese_report_holds_no_english_word_outside_code_names_and_numbers(workspace):
    chosen = {}
    for kata in catalogue.all_katas():
        path = wrong_variants(kata)[-1]
        shutil.copyfile(path, workspace / kata.file)
        chosen[kata.id] = (kata, path)
    proc = run_kata("check", "--all", "--workspace", workspace, "--lang", "zh", env={"COLUMNS": "80"}, timeout=600)
    assert proc.returncode == 1, proc.stderr
    held_to_chinese(panels(proc.stdout), chosen)


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
