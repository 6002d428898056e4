"""`kata quiz`: ask, check, explain, record; and a drill's quiz (`kata drill ... --quiz N`). Never imports torch.

Asked in a terminal, one question at a time (answers are read line by line, so a pipe can answer too);
--print and --json show questions without asking; --answer checks one answer, from anywhere. Every answer is
recorded in the workspace as it is given, and checker.state.history schedules the next time a question comes back.
"""

from __future__ import annotations

import random
from datetime import datetime, timezone

from rich.console import Console, Group
from rich.table import Table
from rich.text import Text

from checker import catalogue, quiz
from checker.state import history
from checker.catalogue import UnknownKata
from checker.errors import EXIT_NOT_PASSED, EXIT_OK, UsageError
from checker.lang import language, say, speaking, tr
from checker.state.progress import ProgressError, open_progress
from checker.app.terminal import Hanging, Wrapped, marks, print_json, warn
from checker.app.terminal import open_workspace

QUIT = {"q", "quit", "exit", "退出"}
REVEAL = {"?", "s", "skip", "跳过"}  # shows the answer; recorded as not known


def chosen(what: list[str]) -> tuple[list[quiz.Question], dict[str, int]]:
    """The questions WHAT names (topics, katas, question ids, ID@SEED), in bank order, and the seeds given."""
    questions = list(quiz.bank().values())
    if not what:
        return questions, {}
    picked, seeds = [], {}
    for word in what:
        qid = word.partition("@")[0]
        if word in quiz.TOPICS:
            found = [q for q in questions if q.topic == word]
        elif qid in quiz.bank():
            q, seed = quiz.find(word)
            found = [q]
            if seed is not None:
                seeds[q.id] = seed
        else:
            try:
                kata = catalogue.find(word)
            except UnknownKata:
                raise UsageError(tr("'{word}' is no topic, kata or question of the quiz; topics: {topics}",
                                   word=word, topics=", ".join(quiz.TOPICS))) from None
            found = [q for q in questions if q.kata == kata.id]
            if not found:  # a kata without questions of its own: its topic's
                topics = {q.topic for q in questions if q.kata in _related(kata.id)}
                found = [q for q in questions if q.topic in topics]
        picked += [q for q in found if q not in picked]
    return picked, seeds


def _related(kata: str) -> set[str]:
    """numpy/attention's questions are attention's: the same idea in the other track."""
    return {kata, kata.rpartition("/")[2]}


def for_katas(katas: list[str]) -> list[quiz.Question]:
    """A drill's quiz: the questions on its katas (either track), else on their topics."""
    names = set().union(*(_related(k) for k in katas))
    questions = [q for q in quiz.bank().values() if q.kata in names]
    topics = {q.topic for q in questions}
    return questions or [q for q in quiz.bank().values() if q.topic in topics]


# ----------------------------------------------------------------------------- drawing a question


def question_view(d: quiz.Drawn, number: int, total: int) -> Group:
    q = d.question
    head = tr("Question {number} of {total} · {topic} · {kind}", number=number, total=total,
             topic=tr(quiz.TOPICS[q.topic]), kind=say(d.lang, f"quiz.kind.{q.kind}"))
    parts = [Text(head, style="dim"), Wrapped(Text(d.text, style="bold"))]
    if q.kind == "choice":
        parts += [Hanging(f"  {quiz.LETTERS[i]}. ", Text(option)) for i, option in enumerate(d.shown)]
    elif q.kind == "order":
        parts += [Hanging(f"  {i + 1}. ", Text(step)) for i, step in enumerate(d.shown)]
    parts.append(Text(f"  ({d.ref})", style="dim"))
    return Group(*parts)



def verdict_view(d: quiz.Drawn, v: quiz.Verdict) -> Group:
    mark = marks()
    if v.right:
        parts = [Text(f"{mark['pass']} " + tr("Right."), style="bold green")]
    else:
        parts = [Wrapped(Text(f"{mark['fail']} " + tr("Not right: the answer is {expected}.", expected=v.expected),
                              style="bold red"))]
    parts += [Wrapped(note, style="yellow") for note in v.notes]
    parts.append(Wrapped(v.explanation))
    parts.append(Wrapped(tr("Source: {source}. Practise it: kata show {kata}", source=quiz.cited(d.question, d.lang),
                           kata=d.question.kata), style="dim"))
    return Group(parts[0], *(Hanging("  ", part.text) for part in parts[1:]))


# ----------------------------------------------------------------------------- the command


def cmd_quiz(args, console: Console) -> int:
    lang = language(args.lang)
    with speaking(lang):
        if args.list:
            return _print_topics(console, lang, args.json)
        if args.answer:
            return _check_one(args, console, lang)
        questions, seeds = chosen(args.what)
        if args.count < 1:
            raise UsageError(tr("--count must be at least 1"))
        progress = _progress(args, console)
        answers = progress.answers() if progress else []
        now = datetime.now(timezone.utc)
        ids = [q.id for q in questions]
        named = all(word.partition("@")[0] in quiz.bank() for word in args.what) and args.what
        order = ids if named else history.quiz_order(ids, answers, now, random.shuffle)  # named: as named
        drawn = [quiz.draw(quiz.bank()[qid], seeds.get(qid) or quiz.new_seed(), lang) for qid in order[:args.count]]
        if args.json:
            print_json({"questions": [d.as_json() for d in drawn]})
            return EXIT_OK
        if args.print:
            for i, d in enumerate(drawn, 1):
                console.print(question_view(d, i, len(drawn)))
                console.print(Wrapped(tr("answer with: kata quiz --answer {ref} ANSWER", ref=d.ref), style="dim"))
                console.print()
            return EXIT_OK
        return ask(console, drawn, progress, lang)


def ask(console: Console, drawn: list[quiz.Drawn], progress, lang: str, drill: int | None = None) -> int:
    """Ask each question in turn: read an answer, check it, explain it, record it. The exit status: 0."""
    right = answered = 0
    for i, d in enumerate(drawn, 1):
        console.print(question_view(d, i, len(drawn)))
        given = _read(console, d)
        if given is None:
            break
        if given in REVEAL:
            verdict = quiz.Verdict(False, given, quiz.expected(d), d.explanation)
        else:
            verdict = quiz.judge(d, given)
        answered += 1
        right += verdict.right
        console.print(verdict_view(d, verdict))
        console.print()
        progress = _record(console, progress, d, verdict, drill)
    if answered:
        console.print(Text(tr("{right} of {answered} right.", right=right, answered=answered), style="bold"))
        console.print(Wrapped(tr("A question answered wrong comes back in 10 minutes; a right one in 1 day, then "
                              "3, 7, 21 and 60 days (`kata next` says when)."), style="dim"))
    return EXIT_OK


def _read(console: Console, d: quiz.Drawn) -> str | None:
    """One answer, asked again until it can be read; None to stop (q, end of input)."""
    console.print(Wrapped(say(d.lang, f"quiz.prompt.{d.question.kind}"), style="dim"))
    while True:
        try:
            line = console.input(Text("> ", style="cyan"))
        except EOFError:
            console.print()
            return None
        line = line.strip()
        if line.lower() in QUIT:
            return None
        if line.lower() in REVEAL:
            return "?"
        if not line:
            continue
        try:
            quiz.judge(d, line)
        except UsageError as err:
            console.print(Wrapped(str(err), style="yellow"))
            continue
        return line


def _progress(args, console: Console):
    """The workspace's history, or None (said on stderr) if it cannot be used: a quiz still works without it."""
    try:
        return open_progress(open_workspace(args, console))
    except ProgressError as err:
        warn(console, str(err))
        return None


def _record(console: Console, progress, d: quiz.Drawn, v: quiz.Verdict, drill: int | None):
    if progress is None:
        return None
    try:
        progress.record_answer(d.question.id, d.seed, d.question.topic, v.right, v.given, drill)
        return progress
    except ProgressError as err:
        warn(console, str(err))
        return None


def _check_one(args, console: Console, lang: str) -> int:
    """kata quiz --answer ID@SEED ANSWER: the verdict, explained and recorded; 0 if right, 1 if not."""
    ref, given = args.answer
    q, seed = quiz.find(ref)
    if seed is None:
        raise UsageError(tr("'{ref}' needs the number of its draw, e.g. {example} (kata quiz --json shows it)",
                           ref=ref, example=f"{q.id}@42"))
    d = quiz.draw(q, seed, lang)
    verdict = quiz.judge(d, given)
    _record(console, _progress(args, console), d, verdict, None)
    if args.json:
        print_json({"ref": d.ref, **verdict.as_json(), "source": quiz.cited(q, lang), "kata": q.kata})
    else:
        console.print(Wrapped(Text(d.text, style="bold")))
        console.print(verdict_view(d, verdict))
    return EXIT_OK if verdict.right else EXIT_NOT_PASSED


def _print_topics(console: Console, lang: str, as_json: bool) -> int:
    rows = []
    for topic, names in quiz.TOPICS.items():
        kinds = [q.kind for q in quiz.bank().values() if q.topic == topic]
        rows.append({"topic": topic, "title": tr(names), "questions": len(kinds),
                     **{kind: kinds.count(kind) for kind in quiz.KINDS}})
    if as_json:
        print_json({"topics": rows})
        return EXIT_OK
    table = Table(title=tr("Quiz topics"), title_justify="left", title_style="bold", box=None, pad_edge=False)
    for column in ("topic", "what", "questions"):
        table.add_column(tr(column), justify="right" if column == "questions" else "left", overflow="fold")
    for row in rows:
        table.add_row(Text(row["topic"], style="bold"), row["title"], str(row["questions"]))
    console.print(table)
    console.print(Wrapped(tr("kata quiz TOPIC asks on one topic; kata quiz KATA on one kata's ideas."), style="dim"))
    return EXIT_OK


def drill_quiz(console: Console, progress, drill: int, katas: list[str], count: int, lang: str) -> dict:
    """After a drill: COUNT questions on its katas, asked and recorded with the drill, scored apart from it."""
    ids = history.quiz_order([q.id for q in for_katas(katas)], progress.answers(), datetime.now(timezone.utc),
                             random.shuffle)
    drawn = [quiz.draw(quiz.bank()[qid], quiz.new_seed(), lang) for qid in ids[:count]]
    console.print(Text(say(lang, "drill.quiz", count=len(drawn)), style="bold"))
    with speaking(lang):
        ask(console, drawn, progress, lang, drill)
    rows = [a for a in progress.answers() if a["drill"] == drill]
    return {"asked": len(drawn), "answered": len(rows), "right": sum(a["right"] for a in rows)}
