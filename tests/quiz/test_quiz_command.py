"""kata quiz through the real CLI: questions without their answers, answers checked, explained and recorded,
wrong ones brought back sooner than right ones; and the same questions asked in a real terminal at 80×24."""

import re
import sqlite3
from datetime import datetime, timedelta, timezone

import pytest
from conftest import run_json, run_kata

from checker import quiz
from checker.state import history

CJK = re.compile(r"[\u4e00-\u9fff]")


def _drawn(ref, lang="en"):
    q, seed = quiz.find(ref)
    return quiz.draw(q, seed, lang)


def _right(d):
    """The answer typed as a candidate who knows it would type it."""
    if d.question.kind == "choice":
        return ",".join(quiz.LETTERS[i] for i in d.right)
    if d.question.kind == "order":
        return " ".join(str(i + 1) for i in d.right)
    return f"{d.value / 1e6:.4g}M"


def _wrong(d):
    if d.question.kind == "choice":
        return next(quiz.LETTERS[i] for i in range(len(d.shown)) if i not in d.right)
    if d.question.kind == "order":
        return " ".join(str(i) for i in range(1, len(d.shown) + 1)) if d.right != list(range(len(d.shown))) else \
            " ".join(str(i) for i in range(len(d.shown), 0, -1))
    return str(d.value * 2)


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_json_lists_questions_without_their_answers_in_the_language_asked(workspace, lang):
    proc, doc = run_json("quiz", "-n", "6", "--lang", lang, "--workspace", workspace)
    assert proc.returncode == 0 and len(doc["questions"]) == 6
    for entry in doc["questions"]:
        assert {"id", "topic", "kind", "text", "ref", "answer_with"} <= set(entry)
        assert entry["kind"] in quiz.KINDS and entry["topic"] in quiz.TOPICS
        assert not {"right", "answer", "explanation", "expected"} & set(entry), "no answer in the questions"
        assert bool(CJK.search(entry["text"])) == (lang == "zh")
        d = _drawn(entry["ref"], lang)
        assert d.text == entry["text"], "the ref draws exactly what was shown"


def test_an_answer_is_checked_from_the_command_line_explained_and_recorded(workspace):
    _, doc = run_json("quiz", "heads", "-n", "40", "--workspace", workspace)
    numeric = next(e for e in doc["questions"] if e["kind"] == "numeric")
    d = _drawn(numeric["ref"])
    proc, verdict = run_json("quiz", "--answer", d.ref, _right(d), "--workspace", workspace)
    assert proc.returncode == 0 and verdict["right"] and verdict["source"] and verdict["explanation"]
    proc, verdict = run_json("quiz", "--answer", d.ref, _wrong(d), "--workspace", workspace, "--lang", "zh")
    assert proc.returncode == 1 and not verdict["right"] and CJK.search(verdict["explanation"])
    assert verdict["expected"].split(" ")[0].replace(",", "") == f"{d.value:.0f}"
    _, stats = run_json("stats", "--workspace", workspace)
    assert stats["quiz"]["answered"] == 2 and stats["quiz"]["right"] == 1


def test_a_wrong_option_says_why_it_is_wrong(workspace):
    d = _drawn("why-scale@5")
    proc = run_kata("quiz", "--answer", d.ref, _wrong(d), "--workspace", workspace)
    assert proc.returncode == 1
    wrong = d.why[quiz.LETTERS.index(_wrong(d))]
    assert " ".join(wrong.split()[:6]) in " ".join(proc.stdout.split())


@pytest.mark.parametrize("args, said", [
    (["--answer", "why-scale@5", "Z"], "letters"),
    (["--answer", "why-scale", "A"], "why-scale@42"),
    (["--answer", "why-scal@5", "A"], "why-scale"),
    (["--answer", "mha-params@5", "lots"], "not a number"),
    (["nosuchtopic"], "topics"),
])
def test_bad_input_is_a_usage_error_that_says_what_to_write(workspace, args, said):
    proc = run_kata("quiz", *args, "--workspace", workspace)
    assert proc.returncode == 2 and said in proc.stderr and "Traceback" not in proc.stderr


def test_answers_are_read_in_the_forms_people_write():
    d = _drawn("mha-params@5")
    exact = int(d.value)
    for form in (f"{exact}", f"{exact:,}", f"{exact / 1e6:.3f}M", f"{exact / 1e6:.3f}e6", f"{exact / 1e4:.2f}万",
                 f"{exact / 1e6:.3f} million", f"{exact / 1e6:.3f}×10^6"):
        assert quiz.judge(d, form).right, form
    assert not quiz.judge(d, str(exact * 2)).right and not quiz.judge(d, str(exact * 1.05)).right
    assert quiz.quantities("2 GiB", "bytes") == [2 ** 31]
    assert quiz.quantities("2GB", "bytes") == [2e9, 2 ** 31], "GB read both ways"
    assert quiz.quantities("7B", "count") == [7e9], "outside bytes, B is a billion"


def test_several_right_options_must_all_be_chosen():
    several = next(q for q in quiz.bank().values() if sum(bool(o.get("right")) for o in q.options) > 1)
    d = quiz.draw(several, 1, "en")
    letters = [quiz.LETTERS[i] for i in d.right]
    assert quiz.judge(d, ",".join(letters)).right and quiz.judge(d, "".join(reversed(letters))).right
    partial = quiz.judge(d, letters[0])
    assert not partial.right and any(letters[1] in note for note in partial.notes)


def _age_answers(ws, **delta):
    with sqlite3.connect(ws / ".kata" / "progress.db") as db:
        when = (datetime.now(timezone.utc) - timedelta(**delta)).isoformat(timespec="seconds")
        db.execute("UPDATE answers SET at = ?", (when,))


def test_wrong_answers_come_back_sooner_than_right_ones_in_kata_next(workspace):
    wrong, right = _drawn("why-scale@2"), _drawn("attention-steps@2")
    assert run_kata("quiz", "--answer", wrong.ref, _wrong(wrong), "--workspace", workspace).returncode == 1
    assert run_kata("quiz", "--answer", right.ref, _right(right), "--workspace", workspace).returncode == 0
    _, doc = run_json("next", "--workspace", workspace)
    assert not any(p["kind"] == "quiz" for p in doc["next"]), "nothing is due the minute it was answered"
    _age_answers(workspace, minutes=30)
    _, doc = run_json("next", "--workspace", workspace)
    quizzes = [p for p in doc["next"] if p["kind"] == "quiz"]
    assert [p["questions"] for p in quizzes] == [["why-scale"]], "the wrong one is due, the right one not yet"
    assert doc["next"][0]["kind"] == "quiz", "before new katas"
    _, asked = run_json("quiz", "attention", "-n", "1", "--workspace", workspace)
    assert asked["questions"][0]["id"] == "why-scale", "kata quiz asks it first"
    _age_answers(workspace, days=2)
    _, doc = run_json("next", "--count", "10", "--workspace", workspace)
    order = [p["questions"] for p in doc["next"] if p["kind"] == "quiz"]
    assert order == [["why-scale"], ["attention-steps"]], "both due: the wrong one first"


def test_the_schedule_spaces_right_answers_out():
    start = datetime(2026, 1, 1, tzinfo=timezone.utc)
    answers = [{"question": "q", "right": 1, "at": (start + timedelta(days=d)).isoformat()} for d in (0, 1, 4)]
    asked = history.quiz_schedule(answers)["q"]
    assert asked.streak == 3 and asked.due_at == start + timedelta(days=4 + 7)
    answers.append({"question": "q", "right": 0, "at": (start + timedelta(days=12)).isoformat()})
    asked = history.quiz_schedule(answers)["q"]
    assert not asked.right and asked.due_at == start + timedelta(days=12, minutes=10)


def test_questions_are_asked_and_explained_through_a_pipe_and_recorded(workspace):
    proc = run_kata("quiz", "why-scale@4", "attention-steps@4", "--workspace", workspace, input="Q?\n?\nq\n")
    assert proc.returncode == 0, proc.stderr
    out = " ".join(proc.stdout.split())
    assert "letters" in out and "Not right: the answer is" in out and "Source:" in out
    assert "Question 2 of 2" in out and "1 of 1 right" not in out and "0 of 1 right" in out
    _, stats = run_json("stats", "--workspace", workspace)
    assert stats["quiz"]["answered"] == 1, "a revealed answer is recorded as not known; q stops"


def test_list_shows_every_topic_with_its_questions(workspace):
    _, doc = run_json("quiz", "--list")
    assert [row["topic"] for row in doc["topics"]] == list(quiz.TOPICS)
    assert sum(row["questions"] for row in doc["topics"]) == len(quiz.bank())
    assert "注意力" in run_kata("quiz", "--list", "--lang", "zh").stdout
