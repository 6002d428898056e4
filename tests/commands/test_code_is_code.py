"""Code is code (issue 26, item 2): hints, statements and solutions show code as code blocks, never wrapped
mid-expression, at any width; a `code` span or a command is never split across two lines.

Every kata, in both languages, at 40, 60, 80 and 120 columns, drawn the way `kata show`, `kata show --hints`
and `kata hint` draw it; then the commands themselves (init, show, hint, solution) in-process at those widths.
A line of code wider than the terminal runs past its edge (the terminal shows the rest on its next row, and
copying keeps it one line): it is never re-flowed. Spans inside a table's cells are left out of the span check:
rich gives a column its width, which can be narrower than the span.
"""

import re

import pytest
from rich.cells import cell_len
from rich.console import Console

from checker import catalogue
from checker.app import cli, statement

WIDTHS = (40, 60, 80, 120)
KATAS = [(k, lang) for k in catalogue.all_katas() for lang in catalogue.LANGUAGES]


# ----------------------------------------------------------------------------- what the Markdown holds


def code_blocks(markdown: str) -> list[list[str]]:
    """The code blocks of some Markdown, each as its lines without their indentation: fenced (also when
    indented under a list item) or indented by four spaces after a blank line or a heading."""
    lines, found, i = markdown.splitlines(), [], 0
    while i < len(lines):
        line, stripped = lines[i], lines[i].lstrip()
        if stripped.startswith("```"):
            indent = len(line) - len(stripped)
            end = next(j for j in range(i + 1, len(lines)) if lines[j].lstrip().startswith("```"))
            found.append([x[indent:] for x in lines[i + 1:end]])
            i = end + 1
        elif line.startswith("    ") and line.strip() and (i == 0 or not lines[i - 1].strip()
                                                              or lines[i - 1].startswith("#")):
            end = i
            while end < len(lines) and (lines[end].startswith("    ") or not lines[end].strip()):
                end += 1
            block = [x[4:] for x in lines[i:end]]
            while block and not block[-1].strip():
                block.pop()
            found.append(block)
            i = end
        else:
            i += 1
    return found


# ----------------------------------------------------------------------------- what the terminal shows


def drawn(renderable, width: int) -> str:
    console = Console(width=width, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable, crop=False)  # as the commands print code: crop=False
    return console.export_text()


def assert_blocks_whole(text: str, blocks: list[list[str]], where: str) -> None:
    """Each block's lines follow one another in text, each whole on a line of its own, at one indentation."""
    lines = [line.rstrip() for line in text.splitlines()]
    for block in blocks:
        first = next(line for line in block if line.strip())
        starts = [i for i, line in enumerate(lines) if line.endswith(first.rstrip()) and not line[
            :len(line) - len(first.rstrip())].strip()]
        at = block.index(first)
        ok = False
        for i in starts:
            pad = len(lines[i]) - len(first.rstrip())
            got = lines[i - at:i - at + len(block)]
            if [g[pad:] for g in got] == [b.rstrip() for b in block] and all(not g[:pad].strip() for g in got):
                ok = True
                break
        assert ok, f"{where}: this code block is not drawn line by line:\n" + "\n".join(block) + "\n---\n" + text


# Drawn around each `code` span by the tests (see marked): zero cells wide, so the layout is the real one.
OPEN, CLOSE = "\u2060", "\u2063"


@pytest.fixture
def marked(monkeypatch):
    """The statement's drawer with each inline `code` span between OPEN and CLOSE."""
    span = statement.code_span
    monkeypatch.setattr(statement, "code_span", lambda code: OPEN + span(code) + CLOSE)


def split_spans(text: str, width: int, margin: int) -> list[str]:
    """The marked spans that fit on a line (width less the margin of a list item) but are drawn across two.
    A span in a table's cell is left out: rich chooses the column's width."""
    split = []
    for drawn_span in re.findall(f"{OPEN}(.*?){CLOSE}", text, re.DOTALL):
        span = re.sub(r" *\n *", " ", drawn_span)  # as long as it was, or one more where a word was folded
        if "\n" in drawn_span and "│" not in drawn_span and cell_len(span) <= width - margin:
            split.append(span)
    return split


def test_the_helpers_find_code_blocks_and_split_spans():
    markdown = "# T\n\n    x = 1\n    y = 2\n\n3. Body:\n\n   ```python\n   if a:\n       b()\n   ```\n"
    assert code_blocks(markdown) == [["x = 1", "y = 2"], ["if a:", "    b()"]]
    assert split_spans(f"one {OPEN}a\n  b{CLOSE} two", 40, 0) == ["a b"]
    assert not split_spans(f"{OPEN}a b{CLOSE}", 40, 0) and not split_spans(f"{OPEN}abc\nd{CLOSE}", 3, 0)


@pytest.mark.parametrize("kata, lang", KATAS, ids=lambda x: getattr(x, "id", x))
def test_every_code_block_is_drawn_line_by_line_and_no_span_is_split_at_any_width(kata, lang, marked):
    markdown, _ = statement.read(kata, lang)
    shown = statement.without(markdown, statement.HINTS)
    levels = statement.hints(kata, lang)
    assert len(levels) == 3 and "```python" in levels[2], "the near-code hint is a code block"
    blocks = code_blocks(shown)
    for width in WIDTHS:
        where = f"{kata.id} --lang {lang} at {width} columns"
        text = drawn(statement.render(shown), width)  # kata show
        assert_blocks_whole(text, blocks, f"kata show {where}")
        split = split_spans(text, width, margin=2)  # a bullet's "• "
        assert not split, f"kata show {where}: split across lines: {split}\n{text}"
        for i, level in enumerate(levels, 1):  # kata hint: each level drawn on its own
            text = drawn(statement.render(level), width)
            assert_blocks_whole(text, code_blocks(level), f"kata hint {where}, level {i}")
            split = split_spans(text, width, margin=0)
            assert not split, f"kata hint {where}, level {i}: split across lines: {split}\n{text}"
        taken = statement.numbered(levels)  # kata show --hints: a numbered list
        text = drawn(statement.render(taken), width)
        assert_blocks_whole(text, code_blocks(taken), f"kata show --hints {where}")
        assert not split_spans(text, width, margin=3), f"kata show --hints {where}"


@pytest.mark.parametrize("kata", catalogue.all_katas(), ids=lambda k: k.id)
def test_both_languages_give_the_same_near_code_and_it_is_python(kata):
    import ast
    import textwrap

    english, chinese = (statement.hints(kata, lang)[2] for lang in ("en", "zh"))
    code = english[english.index("```"):]
    assert chinese.endswith(code), f"{kata.id}: the Chinese hint 3 has other code than the English one"
    body = code.split("\n", 1)[1].rsplit("```", 1)[0]
    ast.parse("def hint():\n    for _ in ():\n" + textwrap.indent(body, " " * 8))  # fragments: return, break
    assert max(map(cell_len, body.splitlines())) <= 76, "it fits an 80-column terminal under `kata hint`"


# ----------------------------------------------------------------------------- the commands


COMMAND = re.compile(r"kata (?:check|hint|solution|show)(?: attention)?(?: --\w+)?")  # kata check --strict too


def run(capsys, monkeypatch, width: int, *argv) -> str:
    monkeypatch.setenv("COLUMNS", str(width))
    monkeypatch.setenv("NO_COLOR", "1")
    capsys.readouterr()
    status = cli.main([*map(str, argv)])
    out = capsys.readouterr()
    assert status == 0, out.err
    return out.out


def commands_split(text: str) -> list[str]:
    """Commands drawn across two lines: `kata check` at the end of a line, `attention` at the start of the next."""
    joined, lines = re.sub(r"[ ]*\n[ ]*", " ", text), text.splitlines()
    return [c for c in set(COMMAND.findall(joined)) if sum(line.count(c) for line in lines) < joined.count(c)]


@pytest.mark.parametrize("lang", catalogue.LANGUAGES)
def test_init_show_hint_and_solution_keep_commands_and_code_whole_at_every_width(tmp_path, capsys, monkeypatch, lang):
    kata = catalogue.find("attention")
    code = code_blocks(statement.hints(kata, lang)[2])
    example = code_blocks(statement.without(statement.read(kata, lang)[0], statement.HINTS))
    solution = (catalogue.SOLUTIONS / kata.file).read_text(encoding="utf-8").splitlines()
    for width in WIDTHS:
        ws = tmp_path / f"ws{width}"
        text = run(capsys, monkeypatch, width, "init", ws, "--lang", lang)
        assert "kata check attention" in text and not commands_split(text), f"init at {width}:\n{text}"
        text = run(capsys, monkeypatch, width, "show", "attention", "--lang", lang)
        assert "kata hint attention" in text and not commands_split(text), f"show at {width}:\n{text}"
        assert_blocks_whole(text, example, f"kata show attention at {width}")
        for level in (1, 2, 3):
            text = run(capsys, monkeypatch, width, "hint", "attention", "--workspace", ws, "--lang", lang)
            assert COMMAND.search(text) and not commands_split(text), f"hint {level} at {width}:\n{text}"
        assert_blocks_whole(text, code, f"kata hint attention at {width}")
        text = run(capsys, monkeypatch, width, "show", "attention", "--hints", "--workspace", ws, "--lang", lang)
        assert_blocks_whole(text, code, f"kata show attention --hints at {width}")
        assert not commands_split(text)
        text = run(capsys, monkeypatch, width, "solution", "attention", "--workspace", ws, "--yes", "--lang", lang)
        numbered = [re.sub(r"^\s*\d+ ?", "", line, count=1).rstrip() for line in text.splitlines()]
        missing = [line for line in solution if line.strip() and line.rstrip() not in numbered]
        assert not missing, f"kata solution at {width}: lines not drawn whole:\n" + "\n".join(missing)
        assert not commands_split(text) and "--strict" in text


# ----------------------------------------------------------------------------- on a real terminal


@pytest.mark.parametrize("lang", catalogue.LANGUAGES)
def test_the_near_code_hint_on_an_80x24_terminal_keeps_its_lines_and_commands_whole(workspace, lang):
    """tmux at 80×24, the size of the trial in issue 26: the third `kata hint attention`."""
    import shutil

    from conftest import run_kata
    from test_live import Terminal

    if shutil.which("tmux") is None:
        pytest.skip("tmux is not installed")
    for _ in range(2):
        run_kata("hint", "attention", "--workspace", workspace, "--lang", lang)
    term = Terminal(f"code-{lang}")
    try:
        term.start("hint", "attention", "--workspace", workspace, "--lang", lang, width=80, height=24)
        term.wait_for("EXIT=0", history=True)
        lines = [line.rstrip() for line in term.screen(history=True).splitlines()]
    finally:
        term.close()
    assert_blocks_whole("\n".join(lines), code_blocks(statement.hints(catalogue.find("attention"), lang)[2]),
                        f"kata hint attention --lang {lang} at 80x24")
    assert any("kata solution attention" in line for line in lines), "\n".join(lines)
    assert max(map(cell_len, lines)) <= 80
