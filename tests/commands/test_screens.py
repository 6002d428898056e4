"""The pieces of the watch and drill screens that need no terminal: wrapping Chinese, and reading keys.

The screens themselves, at 80×24 and resized, are driven in tmux by tests/commands/test_live.py.
"""

import io
import re

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from checker.app.live import Screen, _key_names
from checker.app.terminal import Wrapped, wrap

MESSAGE = ("第 1 组输入（B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6, mask=none）：训练模式下 dropout=0.5 的结果和没有 "
           "dropout 时一样；请在约定的位置使用 self.dropout")


def _rich_lines(text: str, width: int) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(Text(text))
    return console.export_text().rstrip("\n").split("\n")


def test_chinese_lines_are_filled_to_the_width_not_broken_before_every_run_of_chinese():
    for width in (80, 76, 40, 23):
        lines = [line.plain for line in wrap(Text(MESSAGE, style="red"), width)]
        assert all(cell_len(line) <= width for line in lines), lines
        assert "".join(lines).replace(" ", "") == MESSAGE.replace(" ", ""), "nothing lost, nothing added"
        assert not any(line[0] in "，。：；）、" for line in lines), "no line starts with closing punctuation"
        for line, following in zip(lines, lines[1:]):  # each line is full: the next one's first word did not fit
            first = re.match(r"[!-~]+|.[，。：；）、]*", following).group()  # a word, or one character and its comma
            assert cell_len(line) + 1 + cell_len(first) > width, (line, following)
        assert len(lines) <= len(_rich_lines(MESSAGE, width))
    assert [line.plain for line in wrap(Text(MESSAGE), 80)] == [
        "第 1 组输入（B=2, H=3, T_q=5, T_k=7, d_k=4, d_v=6, mask=none）：训练模式下",
        "dropout=0.5 的结果和没有 dropout 时一样；请在约定的位置使用 self.dropout"]


def test_wrapping_keeps_styles_blank_lines_and_folds_a_word_longer_than_the_line():
    text = Text.assemble(("诊断：", "bold yellow"), ("你的掩码反了", "yellow"), "\n\nabcdefghij")
    lines = wrap(text, 4)
    assert [line.plain for line in lines] == ["诊", "断：", "你的", "掩码", "反了", "", "abcd", "efgh", "ij"], \
        "the colon stays with its character"
    assert lines[1].spans[0].style == "bold yellow" and lines[2].spans[0].style == "yellow"
    console = Console(width=40, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(Wrapped("✓\u00a0规范 ▸ ✗\u00a0数值"))
    assert console.export_text() == "✓ 规范 ▸ ✗ 数值\n", "a no-break space draws as a space"


def test_keys_are_read_whole_on_posix_and_on_windows():
    assert _key_names("q", "termios") == ["q"]
    assert _key_names("R\r", "termios") == ["r", "enter"]
    assert _key_names("\x1b[6~\x1b[5~\x1b[A\x1bOB j", "termios") == ["pgdn", "pgup", "up", "down", " ", "j"]
    assert _key_names("\x1bOQ\x1b[15~", "termios") == [], "F2 and F5 are no q and no 1"
    assert _key_names("\xe0Q\x00H\xe0I", "msvcrt") == ["pgdn", "up", "pgup"], "msvcrt's PgDn is no q"
    assert _key_names("\x1b[6~q", "msvcrt") == ["pgdn", "q"], "Windows Terminal sends ANSI sequences too"


def _draw(screen, console, state="s"):
    """Draw a report of 50 lines; the screen as lines of text (here without an alternate screen: cleared, then drawn)."""
    console.file.seek(0)
    console.file.truncate()
    screen.show(state, lambda: ([Text("kata watch · attention · FAIL")], [Text(f"line {i}") for i in range(50)],
                                [Text("Diagnosis: your mask is inverted")], "r re-check · q quit"))
    return re.sub(r"\x1b\[[0-9;]*[A-Za-z]", "", console.file.getvalue()).split("\n")


def test_the_screen_keeps_top_and_diagnosis_and_pages_through_the_middle_at_any_size():
    console = Console(width=80, height=24, file=io.StringIO(), force_terminal=True, color_system=None)
    screen = Screen(console)
    lines = _draw(screen, console)
    assert len(lines) == 24 and lines[0].startswith("kata watch · attention · FAIL")
    assert lines[1].rstrip() == "line 0" and lines[-3].startswith("Diagnosis:") and lines[-1].startswith("r re-check")
    assert lines[-2].startswith("lines 1–20 of 50: ↑↓ j k a line, PgUp PgDn space b a page")
    assert _draw(screen, console) == [""], "nothing changed: nothing drawn again"
    screen.scroll(["pgdn"])  # a page, less one line kept for context
    lines = _draw(screen, console)
    assert lines[1].rstrip() == "line 19" and lines[-2].startswith("lines 20–39 of 50")
    screen.scroll(["pgdn", "pgdn", "j"])  # past the end: the last page
    assert _draw(screen, console)[-2].startswith("lines 31–50 of 50")
    screen.scroll(["k", "up", "b", "pgup", "pgup"])
    assert _draw(screen, console)[1].rstrip() == "line 0"
    console.size = (40, 8)  # a resize: the top, the diagnosis and the keys still fit, the middle gets what is left
    lines = _draw(screen, console)
    assert len(lines) == 8 and all(len(line) == 40 for line in lines)
    assert lines[0].startswith("kata watch") and lines[-4].startswith("Diagnosis") and "q quit" in lines[-1]


def test_a_code_span_or_a_command_moves_whole_to_the_next_line_and_only_one_longer_than_the_line_is_cut():
    """Issue 26: `kata check⏎attention` in init, show and solution; code cut mid-expression in the hints."""
    english = "Next: open ws/torch/attention.py, write the body, then run kata check attention (from inside ws)."
    chinese = "提示：`kata hint attention` 一次给一级；`kata show attention --hints` 重新显示你已经看过的几级。"
    for width in range(30, 100):
        for text, whole in ((english, ["kata check attention"]),
                            (chinese, ["`kata hint attention`", "`kata show attention --hints`"])):
            lines = [line.plain for line in wrap(Text(text), width)]
            assert all(any(w in line for line in lines) for w in whole), (width, lines)
            assert all(cell_len(line) <= width for line in lines)
            assert "".join(lines).replace(" ", "") == text.replace(" ", ""), "nothing lost, nothing added"
    code = "scores = Q @ K.transpose(-2, -1)"  # as `kata show` draws inline code: spaces that do not break
    lines = [line.plain for line in wrap(Text("步骤：" + code.replace(" ", "\u00a0") + " 得到 (B, H, T_q, T_k)"), 36)]
    assert lines[:2] == ["步骤：", code + " 得"], lines
    assert [line.plain for line in wrap(Text("a `0123456789 abcdef` b"), 10)] == [
        "a", "`012345678", "9 abcdef`", "b"], "a span longer than the line starts a line of its own and only then is cut"
    assert [line.plain for line in wrap(Text("设为（`x = y + z`）。"), 12)] == ["设为", "（", "`x = y + z`", "）。"], \
        "rather than cut code, the line breaks beside its brackets"
