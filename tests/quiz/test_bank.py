"""The question bank is whole: every question in both languages, with an explanation, a source and a kata;
every wrong option says why; every generator draws in both languages; enough questions on every topic."""

import re

import pytest
from checker import catalogue, quiz

QUESTIONS = list(quiz.bank().values())
CJK = re.compile(r"[\u4e00-\u9fff]")


def test_the_bank_is_large_and_covers_every_topic_and_kind():
    assert len(QUESTIONS) >= 150
    per_topic = {topic: sum(q.topic == topic for q in QUESTIONS) for topic in quiz.TOPICS}
    assert all(n >= 8 for n in per_topic.values()), per_topic
    assert {q.kind for q in QUESTIONS} == set(quiz.KINDS)


@pytest.mark.parametrize("q", QUESTIONS, ids=lambda q: q.id)
def test_a_question_is_whole_in_both_languages(q):
    assert re.fullmatch(r"[a-z0-9]+(-[a-z0-9]+)*", q.id), "ids are lower-case words joined by -"
    assert q.topic in quiz.TOPICS and q.kind in quiz.KINDS
    catalogue.find(q.kata)  # the kata that drills the same idea exists
    assert q.source in quiz.sources(), f"unknown source {q.source!r}"
    for lang in ("en", "zh"):
        assert q.text[lang].strip() and len(q.explain[lang].strip()) >= 30
    assert CJK.search(q.text["zh"]) and CJK.search(q.explain["zh"])
    if q.kind == "choice":
        assert len(q.options) >= 3 and any(o.get("right") for o in q.options)
        assert len({o["en"] for o in q.options}) == len(q.options) == len({o["zh"] for o in q.options})
        for option in q.options:
            assert option["en"].strip() and option["zh"].strip()
            if not option.get("right"):  # a wrong option is a real misconception, said
                assert option.get("why_en", "").strip() and CJK.search(option.get("why_zh", "")), option["en"]
    elif q.kind == "order":
        assert len(q.steps) >= 3 and all(s["en"].strip() and s["zh"].strip() for s in q.steps)
        assert len({s["en"] for s in q.steps}) == len(q.steps)
    else:
        assert not q.options and not q.steps


@pytest.mark.parametrize("q", [q for q in QUESTIONS if q.kind == "numeric"], ids=lambda q: q.id)
def test_a_numeric_question_draws_fresh_numbers_in_both_languages(q):
    texts = set()
    for seed in range(1, 25):
        for lang in ("en", "zh"):
            drawn = quiz.draw(q, seed, lang)
            assert "{" not in drawn.text and "{" not in drawn.explanation, drawn.text
            assert drawn.value is not None and drawn.value > 0 and drawn.unit in ("count", "bytes", "flops", "plain")
            texts.add(drawn.text)
            # the explanation shows the answer, so a candidate can see where the number comes from
            assert quiz.judge(drawn, quiz.spelled(drawn.value, drawn.unit).split(" ")[0]).right
    assert len(texts) >= 6, "the numbers change from draw to draw"
