"""The history model: rounds, drill scores, stats and what to practise next, computed from records.

Records are the rows of the progress database (checks, events, drills), read by the caller and
passed in; nothing here prints, writes or reads a file. History is read back as *rounds*: one
attempt at one kata, from a drill's start, a reset, or else the kata's first check, to the next reset.
Scores, time to green, stats and spaced repetition are all computed from rounds, so a killed
drill is reported like any other. Never imports torch.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from datetime import datetime

from checker.catalogue import Kata
from checker.lang import say, speaking, t
from checker.results import STAGES


@dataclass(frozen=True)
class Records:
    """The progress database's rows, oldest first: checks, events (hint, solution, reset) and drills;
    and the id of the drill running now, if any (a drill without an end is otherwise one killed)."""

    checks: list[dict]
    events: list[dict]
    drills: list[dict]
    running: int | None = None
    answers: list[dict] = field(default_factory=list)  # quiz answers (checker.state.progress, table answers)


@dataclass
class Round:
    """One attempt at one kata: in a drill, or in the workspace between two resets."""

    kata: str
    start: datetime  # a drill's start, a reset, or else the kata's first check
    drill: int | None = None
    attempts: int = 0
    passes: int = 0
    tries_to_green: int = 0
    green: float | None = None  # seconds from the start to the first pass
    green_at: datetime | None = None
    last_at: datetime | None = None
    status: str = "not_started"  # of the last check
    stage: str | None = None  # furthest stage passed in full
    hints: int = 0
    solution: bool = False
    followups: int = 0  # accepted variants and follow-up questions open at the last pass

    def add_check(self, row: dict, at: datetime) -> None:
        self.attempts += 1
        self.passes += row["status"] == "pass"
        if row["status"] == "pass":
            self.followups = row.get("followups") or 0
        self.status, self.last_at = row["status"], at
        if row["stage"] in STAGES and (self.stage is None or STAGES.index(row["stage"]) > STAGES.index(self.stage)):
            self.stage = row["stage"]
        if row["status"] == "pass" and self.green_at is None:
            self.green_at, self.tries_to_green = at, self.attempts
            if self.drill is not None and row["elapsed"] is not None:
                self.green = row["elapsed"]
            else:
                self.green = (at - self.start).total_seconds()

    def add_event(self, row: dict) -> None:
        self.hints += row["kind"] == "hint"
        self.solution |= row["kind"] == "solution"

    @property
    def tried(self) -> bool:
        """Real code was checked (not only the untouched stub)."""
        return self.attempts > 0 and (self.passes > 0 or self.status != "not_started" or self.stage is not None)

    def hard(self, lang: str) -> str | None:
        """Why this round was hard, or None: the solution, two hints or more, many attempts, no green in a drill."""
        if self.solution:
            return say(lang, "why.solution")
        if self.hints >= 2:
            return say(lang, "why.hints", count=self.hints)
        if self.tries_to_green >= 8:
            return say(lang, "why.attempts", count=self.tries_to_green)
        if self.drill is not None and self.green_at is None:
            return say(lang, "why.not_green")
        return None


def parse(at: str) -> datetime:
    return datetime.fromisoformat(at)


def rounds(records: Records) -> list[Round]:
    """Every round in the history, oldest first."""
    drill_start = {d["id"]: parse(d["started_at"]) for d in records.drills}
    rows = sorted([("check", c) for c in records.checks] + [("event", e) for e in records.events],
                  key=lambda kr: (kr[1]["at"], kr[0] == "check"))
    open_rounds: dict = {}  # (kata, drill) -> Round; drill None: the workspace file
    done: list[Round] = []
    for kind, row in rows:
        kata, drill, at = row["kata"], row["drill"], parse(row["at"])
        key = (kata, drill)
        if kind == "event" and row["kind"] == "reset" and drill is None:
            if key in open_rounds:
                done.append(open_rounds.pop(key))
            open_rounds[key] = Round(kata, at)
            continue
        if key not in open_rounds:
            start = drill_start.get(drill, at)
            open_rounds[key] = Round(kata, start, drill=drill)
        r = open_rounds[key]
        r.add_check(row, at) if kind == "check" else r.add_event(row)
    return sorted(done + list(open_rounds.values()), key=lambda r: r.start)


# ----------------------------------------------------------------------------- drill scores


# What a green kata with open follow-up questions scores below a clean one: slightly less, since the
# interviewer accepts the answer and asks one more question.
FOLLOWUP_COST = 5


def kata_score(r: Round | None, minutes: float) -> int:
    """0..100: green scores 70 plus up to 30 for speed, less FOLLOWUP_COST with follow-ups open;
    otherwise 10 per stage reached, at most 50. Each hint costs 10, the solution 50."""
    if r is None:
        return 0
    if r.green is not None:
        score = 70 + 30 * max(0.0, 1 - r.green / (minutes * 60)) - FOLLOWUP_COST * bool(r.followups)
    else:
        score = min(50, 10 * (STAGES.index(r.stage) + 1)) if r.stage else 0
    return max(0, round(score - 10 * r.hints - 50 * r.solution))


ENDS = ("time", "done", "quit", "interrupted")  # how a drill can end; killed drills have none


def _kata_result(name: str, r: Round | None, minutes: float) -> dict:
    return {"name": name, "status": r.status if r else "not_started", "stage": r.stage if r else None,
            "attempts": r.attempts if r else 0, "first_green_seconds": r.green if r else None,
            "hints": r.hints if r else 0, "solution": bool(r and r.solution), "score": kata_score(r, minutes)}


def drill_summaries(records: Records) -> list[dict]:
    """Every drill, oldest first, with its per-kata results and score (computed, so killed drills count).
    Drills with the same label compare: the same preset, or for a drill of your own, the same katas."""
    by_drill: dict = {}
    for r in rounds(records):
        if r.drill is not None:
            by_drill.setdefault(r.drill, {})[r.kata] = r
    summaries = []
    for d in records.drills:
        names = d["katas"].split()
        results = [_kata_result(name, by_drill.get(d["id"], {}).get(name), d["minutes"]) for name in names]
        label = "custom: " + ", ".join(names) if d["preset"] == "custom" else d["preset"]
        summaries.append({
            "id": d["id"], "preset": d["preset"], "label": label, "started_at": d["started_at"],
            "minutes": d["minutes"], "folder": d["folder"],
            "end": d["end_reason"] or ("running" if d["id"] == records.running else "killed"),
            "allow_hints": bool(d["allow_hints"]),
            "score": round(sum(k["score"] for k in results) / len(results)) if results else 0,
            "green": sum(k["first_green_seconds"] is not None for k in results), "katas": results})
    return summaries


def drill_report(records: Records, drill_id: int) -> dict:
    """One drill's summary, and the scores of the earlier drills it compares with."""
    summaries = drill_summaries(records)
    report = next(s for s in summaries if s["id"] == drill_id)
    earlier = [s["score"] for s in summaries if s["id"] < drill_id and s["label"] == report["label"]]
    report["earlier"] = {"count": len(earlier), "scores": earlier,
                         "last": earlier[-1] if earlier else None, "best": max(earlier) if earlier else None}
    quiz = [a for a in records.answers if a["drill"] == drill_id]  # its quiz, scored apart from the code
    report["quiz"] = {"answered": len(quiz), "right": sum(a["right"] for a in quiz)} if quiz else None
    return report


# ----------------------------------------------------------------------------- stats


def kata_stats(records: Records, katas: tuple[Kata, ...]) -> list[dict]:
    """Per kata with any history, in the order of the catalogue `katas`."""
    by_kata: dict[str, list[Round]] = {}
    for r in rounds(records):
        by_kata.setdefault(r.kata, []).append(r)
    order = {k.id: k.order for k in katas}
    rows = []
    for name, rs in sorted(by_kata.items(), key=lambda kv: order.get(kv[0], len(order))):
        attempts = sum(r.attempts for r in rs)
        greens = [r.green for r in sorted(rs, key=lambda r: r.green_at or r.start) if r.green is not None]
        last = max((r.last_at for r in rs if r.last_at), default=None)
        rows.append({"name": name, "attempts": attempts, "passes": sum(r.passes for r in rs),
                     "pass_rate": round(sum(r.passes for r in rs) / attempts, 3) if attempts else None,
                     "best_seconds_to_green": min(greens, default=None),
                     "last_seconds_to_green": greens[-1] if greens else None, "seconds_to_green": greens,
                     "hints": sum(r.hints for r in rs), "solutions": sum(r.solution for r in rs),
                     "rounds": len(rs), "last_at": last.isoformat() if last else None})
    return rows


def ago(at: datetime | None, lang: str, now: datetime) -> str:
    if at is None:
        return "–"
    days = (now - at).days
    return say(lang, "ago.today") if days < 1 else say(lang, "ago.days", days=days)


# ----------------------------------------------------------------------------- what to practise next

INTERVALS = (1, 3, 7, 21, 60)  # days until the next review after 0, 1, 2, 3, 4+ easy rounds in a row
# A kata whose last check did not pass is work in progress; why, in words
IN_PROGRESS = {"fail": "in progress: your last check failed", "error": "in progress: your last check stopped on an error",
               "timeout": "in progress: your last check ran out of time"}


def suggestions(records: Records, katas: tuple[Kata, ...], lang: str, now: datetime) -> list[dict]:
    """What to practise, best first: work in progress, due reviews (most overdue first), new katas in
    the order of `katas` (the learning path), then reviews that are not due yet."""
    by_kata: dict[str, list[Round]] = {}
    for r in rounds(records):
        if r.tried:
            by_kata.setdefault(r.kata, []).append(r)
    status = {c["kata"]: c["status"] for c in records.checks if c["drill"] is None}  # the workspace's last
    going, due, new, early = [], [], [], []
    for kata in katas:
        item = {"name": kata.id, "title": kata.title_in(lang)}
        if status.get(kata.id) in IN_PROGRESS:
            with speaking(lang):
                reason = t(IN_PROGRESS[status[kata.id]])
            going.append({**item, "kind": "continue", "command": f"kata watch {kata.id}", "reason": reason})
        elif kata.id not in by_kata:
            new.append({**item, "kind": "new", "command": f"kata show {kata.id}; kata watch {kata.id}",
                        "reason": say(lang, "next.new")})
        else:
            waited, interval, entry = _review(by_kata[kata.id], lang, now)
            (due if waited >= interval else early).append((-waited / interval, {**item, **entry}))
    wrong, again, unasked = _quiz_entries(records, {k.id for k in katas}, lang, now)
    # questions never asked on passed katas: after the next new kata, so that the path still leads
    return going + wrong + _by_urgency(due) + again + new[:1] + unasked + new[1:] + _by_urgency(early)


def _review(tried: list[Round], lang: str, now: datetime) -> tuple[float, int, dict]:
    """(days since the last round, days between reviews, the suggestion); easy rounds in a row space them out."""
    easy = 0
    for r in reversed(tried):
        if r.green_at is None or r.hard(lang):
            break
        easy += 1
    last = tried[-1]
    when = last.green_at or last.last_at
    interval = INTERVALS[min(easy, len(INTERVALS) - 1)]
    waited = (now - when).total_seconds() / 86400
    hard = last.hard(lang)
    if hard:
        reason = say(lang, "next.hard", why=hard, ago=ago(when, lang, now))
    elif waited >= interval:
        reason = say(lang, "next.due", ago=ago(when, lang, now))
    else:
        reason = say(lang, "next.later", days=max(1, round(interval - waited)))
    return waited, interval, {"kind": "review", "command": f"kata drill {last.kata}", "reason": reason,
                               "due_in_days": round(max(0.0, interval - waited), 1)}


def _by_urgency(pairs: list[tuple[float, dict]]) -> list[dict]:
    return [entry for _, entry in sorted(pairs, key=lambda pair: pair[0])]


# ----------------------------------------------------------------------------- the quiz's schedule

QUIZ_AGAIN = timedelta(minutes=10)  # a question answered wrong comes back this soon; a right one after INTERVALS


@dataclass(frozen=True)
class Asked:
    """Where one quiz question stands: its last answer, the right answers in a row, and when it is due again."""

    question: str
    right: bool
    streak: int
    last_at: datetime
    due_at: datetime


def quiz_schedule(answers: list[dict]) -> dict[str, Asked]:
    """Every question answered, by id (answers oldest first; a drill's quiz counts like any other)."""
    by_question: dict[str, list[dict]] = {}
    for a in answers:
        by_question.setdefault(a["question"], []).append(a)
    schedule = {}
    for question, rows in by_question.items():
        streak = 0
        for row in reversed(rows):
            if not row["right"]:
                break
            streak += 1
        last = parse(rows[-1]["at"])
        wait = timedelta(days=INTERVALS[min(streak, len(INTERVALS)) - 1]) if streak else QUIZ_AGAIN
        schedule[question] = Asked(question, bool(streak), streak, last, last + wait)
    return schedule


def quiz_order(questions: list[str], answers: list[dict], now: datetime, shuffle) -> list[str]:
    """The questions to ask, best first: those answered wrong and due again (longest waiting first), right ones
    due for review, questions never asked (in shuffle's order), then the rest by how soon they are due."""
    schedule = quiz_schedule(answers)
    asked = [schedule[q] for q in questions if q in schedule]
    wrong = sorted((a for a in asked if not a.right and a.due_at <= now), key=lambda a: a.due_at)
    review = sorted((a for a in asked if a.right and a.due_at <= now), key=lambda a: a.due_at)
    later = sorted((a for a in asked if a.due_at > now), key=lambda a: a.due_at)
    fresh = [q for q in questions if q not in schedule]
    shuffle(fresh)
    return [a.question for a in wrong + review] + fresh + [a.question for a in later]


def _quiz_entries(records: Records, katas: set[str], lang: str, now: datetime) -> tuple[list, list, list]:
    """kata next's quiz lines: questions answered wrong and due again (before due reviews), right ones due
    for review (after them), and questions never asked on katas already passed."""
    from checker import quiz

    bank = quiz.bank()
    schedule = quiz_schedule([a for a in records.answers if a["question"] in bank])
    item = {"name": "quiz", "title": say(lang, "next.quiz_title"), "kind": "quiz", "command": "kata quiz"}
    wrong = [a.question for a in schedule.values() if not a.right and a.due_at <= now]
    again = [a.question for a in schedule.values() if a.right and a.due_at <= now]
    passed = {c["kata"] for c in records.checks if c["status"] == "pass"} & katas
    unasked = [q.id for q in bank.values() if q.kata in passed and q.id not in schedule]
    entries = []
    for ids, key in ((wrong, "next.quiz_wrong"), (again, "next.quiz_due"), (unasked, "next.quiz_new")):
        entries.append([{**item, "reason": say(lang, key, count=len(ids)), "questions": ids}] if ids else [])
    return tuple(entries)


def quiz_stats(records: Records, now: datetime) -> dict | None:
    """The quiz so far: answers given and right, questions asked and due again, per topic; None before any."""
    if not records.answers:
        return None
    schedule = quiz_schedule(records.answers)
    topics = {}
    for a in records.answers:
        row = topics.setdefault(a["topic"], {"topic": a["topic"], "answered": 0, "right": 0, "questions": set()})
        row["answered"] += 1
        row["right"] += a["right"]
        row["questions"].add(a["question"])
    for row in topics.values():
        row["due"] = sum(schedule[q].due_at <= now for q in row["questions"])
        row["questions"] = len(row["questions"])
    rows = list(topics.values())
    return {"answered": len(records.answers), "right": sum(a["right"] for a in records.answers),
            "questions": len(schedule), "due": sum(a.due_at <= now for a in schedule.values()), "topics": rows}
