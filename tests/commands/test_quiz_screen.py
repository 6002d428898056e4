"""kata quiz and a drill's quiz in a real terminal (tmux) at 80×24, in Chinese."""

import pytest
from test_live import term  # noqa: F401 - the fixture: one tmux session

from checker import quiz


def _a_wrong_letter(ref):
    q, seed = quiz.find(ref)
    d = quiz.draw(q, seed, "zh")
    return next(quiz.LETTERS[i] for i in range(len(d.shown)) if i not in d.right)


def test_the_quiz_in_a_real_terminal_at_80x24_in_chinese(term, workspace):
    term.start("quiz", "why-scale@9", "mha-params@9", "--lang", "zh", "--workspace", workspace, width=80, height=24)
    term.wait_for("第 1 题", "用字母作答")
    term.keys(_a_wrong_letter("why-scale@9"), "Enter")
    term.wait_for("不对", "出处", "第 2 题")
    term.keys("q", "Enter")
    screen = term.wait_for("EXIT=0")
    assert "答对 0 题，共答 1 题" in screen
    assert all(len(line) <= 80 for line in term.lines())


def test_a_drill_ends_with_its_quiz_scored_apart(term, workspace):
    """q ends the drill; then two questions on its kata, answered at the terminal; the report keeps them apart."""
    import json

    from conftest import run_kata

    term.start("drill", "attention", "--minutes", "5", "--quiz", "2", "--workspace", workspace, width=80, height=24)
    term.wait_for("left", "q end the drill")
    term.keys("q")
    term.wait_for("Question 1 of 2", "Answer with")
    term.keys("?", "Enter")
    term.wait_for("Question 2 of 2")
    term.keys("q", "Enter")
    screen = term.wait_for("Quiz: 0 of 1 right", "Drill report", history=True)
    assert "not part of the score above" in screen
    (drill,) = json.loads(run_kata("stats", "--json", "--workspace", workspace).stdout)["drills"]
    stats = json.loads(run_kata("stats", "--json", "--workspace", workspace).stdout)["quiz"]
    assert stats["answered"] == 1 and stats["topics"][0]["topic"] == "attention" and drill["end"] == "quit"
