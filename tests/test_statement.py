"""Every statement, in both languages, draws completely: no Markdown syntax left, nothing lost."""

import pytest
from rich.console import Console

from checker import catalogue
from checker.statement import render

STATEMENTS = [(k, lang) for k in catalogue.all_katas() for lang in catalogue.LANGUAGES]


@pytest.mark.parametrize("kata, lang", STATEMENTS, ids=lambda x: getattr(x, "id", x))
def test_statement_draws_without_markdown_left_over(kata, lang):
    console = Console(record=True, width=200, color_system=None)
    console.print(render(kata.statement_path(lang).read_text(encoding="utf-8")))
    drawn = console.export_text()
    assert "```" not in drawn and "|---" not in drawn and "\n## " not in drawn
    for hint in catalogue.hints(kata, lang):
        parts = hint.split("`")  # odd parts are inline code, drawn as written; bold markers go elsewhere
        first_words = "".join(p if i % 2 else p.replace("**", "") for i, p in enumerate(parts))[:20]
        assert first_words in " ".join(drawn.split()), f"hint not drawn: {first_words!r}"


def test_inline_code_bold_lists_and_tables():
    console = Console(record=True, width=80, color_system=None)
    console.print(render("# T\n\n- a `x` and **b**\n  continued\n\n| h1 | h2 |\n|---|---|\n| 1 | 2 |\n\n    code line\n"))
    text = console.export_text()
    assert "• a x and b continued" in text and "h1" in text and "│ 1" in text and "    code line" in text
