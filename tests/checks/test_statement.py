"""Every statement, in both languages, draws completely: no Markdown syntax left, nothing lost."""

import pytest
from rich.console import Console

from checker import catalogue
from checker.app import statement
from checker.app.statement import render

STATEMENTS = [(k, lang) for k in catalogue.all_katas() for lang in catalogue.LANGUAGES]


@pytest.mark.parametrize("kata, lang", STATEMENTS, ids=lambda x: getattr(x, "id", x))
def test_statement_draws_without_markdown_left_over(kata, lang):
    console = Console(record=True, width=200, color_system=None)
    console.print(render(kata.statement_path(lang).read_text(encoding="utf-8")))
    drawn = console.export_text()
    assert "```" not in drawn and "|---" not in drawn and "\n## " not in drawn
    for hint in statement.hints(kata, lang):
        parts = hint.split("```")[0].split("`")  # odd parts are inline code, drawn as written; bold markers go
        first_words = "".join(p if i % 2 else p.replace("**", "") for i, p in enumerate(parts))[:20]
        assert " ".join(first_words.split()) in " ".join(drawn.split()), f"hint not drawn: {first_words!r}"


def test_inline_code_bold_lists_and_tables():
    console = Console(record=True, width=80, color_system=None)
    console.print(render("# T\n\n- a `x` and **b**\n  continued\n\n| h1 | h2 |\n|---|---|\n| 1 | 2 |\n\n    code line\n"))
    text = console.export_text()
    assert "• a x and b continued" in text and "h1" in text and "│ 1" in text and "    code line" in text


def test_one_reader_gives_the_text_hints_and_pitfalls_falling_back_to_english(tmp_path, monkeypatch):
    monkeypatch.setattr(catalogue, "PACKAGE", tmp_path)  # where statement_path looks
    kata = catalogue.Kata("demo", "torch", "Demo", 1, ("Demo",), (), 0)
    folder = tmp_path / "checks" / "torch_demo"
    folder.mkdir(parents=True)
    english = ("# Demo\n\n## Pitfalls\n\n- one\n  continued\n- two\n\n## Hints\n\n1. concept\n2. steps\n   continued\n"
               "3. near-code\n\n## Example\n\n- not a pitfall\n4. not a hint\n")
    (folder / "statement.md").write_text(english, encoding="utf-8")
    assert statement.read(kata, "zh") == (english, "en"), "no Chinese statement: the English one, and it says so"
    assert statement.hints(kata, "zh") == ["concept", "steps continued", "near-code"]
    assert statement.pitfalls(kata, "en") == ["one continued", "two"]

    (folder / "statement.zh.md").write_text("# 演示\n\n## 易错点\n\n- 一\n\n## 提示\n\n1. 概念\n", encoding="utf-8")
    assert statement.read(kata, "zh")[1] == "zh"
    assert statement.hints(kata, "zh") == ["概念"] and statement.pitfalls(kata, "zh") == ["一"]


def test_a_hint_keeps_its_code_block_line_by_line_and_draws_it_unwrapped():
    lines = ["1. concept", "   continued", "3. The body:", "", "   ```python", "   if mask is not None:",
             "       scores = scores.masked_fill(~mask, float(\"-inf\"))", "", "   return scores", "   ```",
             "   Then more", "   text."]
    hint = "The body:\n\n```python\nif mask is not None:\n    scores = scores.masked_fill(~mask, float(\"-inf\"))\n\n" \
           "return scores\n```\n\nThen more text."
    assert statement.items(lines, statement._NUMBERED) == ["concept continued", hint]
    assert statement.hints_in("## Hints\n" + "\n".join(lines) + "\n## Next\n- no hint\n") == ["concept continued", hint]
    for markdown, indent in ((hint, 4), (statement.numbered(["concept", hint]), 7)):  # kata hint; show --hints
        console = Console(record=True, width=30, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
        console.print(render(markdown), crop=False)
        drawn = console.export_text().splitlines()
        pad = " " * indent
        assert [pad + "if mask is not None:", pad + "    scores = scores.masked_fill(~mask, float(\"-inf\"))", "",
                pad + "return scores"] == drawn[drawn.index(pad + "if mask is not None:"):][:4], drawn
        assert "```" not in "\n".join(drawn) and "Then more text." in " ".join(drawn)


def test_every_step_of_every_reference_answer_has_chinese():
    from checker.catalogue import SOLUTIONS

    missing = []
    for kata in catalogue.all_katas():
        source = (SOLUTIONS / kata.file).read_text(encoding="utf-8")
        english, chinese = statement.steps(source, "en", kata), statement.steps(source, "zh", kata)
        assert english and len(english) == len(chinese), kata.id
        missing += [f"{kata.id}: {e}" for e, z in zip(english, chinese) if e == z and not e.endswith(":")]
    assert not missing, "no Chinese for these steps (add them to checker/checks/TRACK_NAME/zh.toml):\n" + "\n".join(missing)


def test_steps_are_numbered_and_headed_by_their_function_when_several_have_steps():
    source = "class A:\n    def f(self):\n        # 1) project\n        # 2) attend\n        pass\n\n\ndef g():\n    # 1) embed\n    pass\n"
    assert statement.steps(source) == ["A.f:", "  1) project", "  2) attend", "g:", "  1) embed"]
    assert statement.steps("def g():\n    # 1) embed\n    pass\n") == ["1) embed"]


def test_chinese_wraps_between_characters_never_before_a_closing_mark_and_fills_the_line():
    from rich.cells import cell_len

    text = "步骤：`scores = Q @ K.transpose(-2, -1)` 得到 (B, H, T_q, T_k)；除以 `math.sqrt(Q.size(-1))`；把被遮挡的分数设为 `-inf`；`softmax(dim=-1)`；再把被遮挡的权重重新置 0（这一步顺带修好了没有可见键的行）；最后乘以 V。"
    console = Console(width=40, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(statement.render(text))
    lines = console.export_text().splitlines()
    assert "".join(line.strip() for line in lines).replace(" ", "") == text.replace("`", "").replace(" ", "")
    assert all(cell_len(line) <= 40 for line in lines) and not any(line[:1] in "，。；：）" for line in lines)
    assert all(cell_len(line) > 20 for line in lines[:-1]), f"no line breaks early: {lines}"
