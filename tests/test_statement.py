"""Every statement, in both languages, draws completely: no Markdown syntax left, nothing lost."""

import pytest
from rich.console import Console

from checker import catalogue, statement
from checker.statement import render

STATEMENTS = [(k, lang) for k in catalogue.all_katas() for lang in catalogue.LANGUAGES]


@pytest.mark.parametrize("kata, lang", STATEMENTS, ids=lambda x: getattr(x, "id", x))
def test_statement_draws_without_markdown_left_over(kata, lang):
    console = Console(record=True, width=200, color_system=None)
    console.print(render(kata.statement_path(lang).read_text(encoding="utf-8")))
    drawn = console.export_text()
    assert "```" not in drawn and "|---" not in drawn and "\n## " not in drawn
    for hint in statement.hints(kata, lang):
        parts = hint.split("`")  # odd parts are inline code, drawn as written; bold markers go elsewhere
        first_words = "".join(p if i % 2 else p.replace("**", "") for i, p in enumerate(parts))[:20]
        assert first_words in " ".join(drawn.split()), f"hint not drawn: {first_words!r}"


def test_inline_code_bold_lists_and_tables():
    console = Console(record=True, width=80, color_system=None)
    console.print(render("# T\n\n- a `x` and **b**\n  continued\n\n| h1 | h2 |\n|---|---|\n| 1 | 2 |\n\n    code line\n"))
    text = console.export_text()
    assert "• a x and b continued" in text and "h1" in text and "│ 1" in text and "    code line" in text


def test_one_reader_gives_the_text_hints_and_pitfalls_falling_back_to_english(tmp_path, monkeypatch):
    monkeypatch.setattr(catalogue, "PACKAGE", tmp_path)  # where statement_path looks
    kata = catalogue.Kata("demo", "torch", "Demo", 1, ("Demo",), (), 0)
    folder = tmp_path / "statements" / "torch"
    folder.mkdir(parents=True)
    english = ("# Demo\n\n## Pitfalls\n\n- one\n  continued\n- two\n\n## Hints\n\n1. concept\n2. steps\n   continued\n"
               "3. near-code\n\n## Example\n\n- not a pitfall\n4. not a hint\n")
    (folder / "demo.md").write_text(english, encoding="utf-8")
    assert statement.read(kata, "zh") == (english, "en"), "no Chinese statement: the English one, and it says so"
    assert statement.hints(kata, "zh") == ["concept", "steps continued", "near-code"]
    assert statement.pitfalls(kata, "en") == ["one continued", "two"]

    (folder / "demo.zh.md").write_text("# 演示\n\n## 易错点\n\n- 一\n\n## 提示\n\n1. 概念\n", encoding="utf-8")
    assert statement.read(kata, "zh")[1] == "zh"
    assert statement.hints(kata, "zh") == ["概念"] and statement.pitfalls(kata, "zh") == ["一"]
