"""hint, solution, reset, stats and next, plus what drills keep: presets, rounds, scores, reports.

History is read back from the progress database as *rounds*: one attempt at one kata, from a
drill's start or a reset (or the first check) to the next reset. Scores, time to green, stats and
spaced repetition are all computed from rounds, so a killed drill is reported like any other.
Never imports torch.
"""

from __future__ import annotations

import ast
import os
import random
import re
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.console import Console
from rich.table import Table
from rich.text import Text

from checker import catalogue, workspace
from checker.catalogue import Kata
from checker.lang import language, say
from checker.paths import KATAS, SOLUTIONS
from checker.report import STAGES, status_text
from checker.progress import NotRecorded
from checker.terminal import EXIT_OK, UsageError, confirm, open_progress, open_workspace, print_json, warn, writable

# ----------------------------------------------------------------------------- drill presets


@dataclass(frozen=True)
class Preset:
    title: str
    minutes: float
    katas: tuple[str, ...] = ()
    difficulties: tuple[int, ...] = ()  # a random mix: one kata of each difficulty


PRESETS = {
    "attention-core": Preset("Attention core", 30, ("attention", "multi_head_attention")),
    "full-transformer": Preset("Full Transformer", 60, ("encoder_layer", "decoder_layer", "transformer")),
    "numpy-basics": Preset("NumPy basics", 30, ("numpy/softmax", "numpy/attention", "numpy/layer_norm")),
    "random-mix": Preset("Random mix by difficulty", 45, difficulties=(1, 2, 3)),
    "llm-decoder": Preset("LLM decoder", 45, ("rms_norm", "rope", "swiglu", "grouped_query_attention", "kv_cache")),
}
MINUTES_PER_STAR = 10  # a drill of your own choice: 10 minutes per star of difficulty


def preset_katas(preset: Preset) -> list[Kata]:
    """The preset's katas that the catalogue has (a random pick for a mix)."""
    known = {k.id: k for k in catalogue.all_katas()}
    if preset.difficulties:
        pick = random.Random()
        pools = [[k for k in known.values() if k.difficulty == d] for d in preset.difficulties]
        return [pick.choice(pool) for pool in pools if pool]
    return [known[name] for name in preset.katas if name in known]


def print_presets(console: Console, lang: str, as_json: bool) -> int:
    known = {k.id for k in catalogue.all_katas()}
    rows = [{"name": name, "title": p.title, "minutes": p.minutes, "katas": [k for k in p.katas if k in known],
             "difficulties": list(p.difficulties)} for name, p in PRESETS.items()]
    if as_json:
        print_json({"presets": rows})
        return EXIT_OK
    table = Table(title=say(lang, "drill.presets"), title_justify="left", title_style="bold")
    for column in ("preset", "minutes", "what", "katas"):
        table.add_column(column, justify="right" if column == "minutes" else "left", no_wrap=column == "preset",
                         max_width=18 if column == "what" else None, overflow="fold")  # kata names never cut
    for row in rows:
        katas = ", ".join(row["katas"]) or "random: difficulty " + ", ".join(map(str, row["difficulties"]))
        table.add_row(Text(row["name"], style="bold"), f"{row['minutes']:g}", Text(row["title"]), Text(katas))
    console.print(table)
    console.print(Text("kata drill PRESET, or kata drill KATA... [--minutes M]; --allow-hints unlocks hints.",
                       style="dim"))
    return EXIT_OK


def choose_drill(names: list[str], minutes: float | None) -> tuple[str, list[Kata], float]:
    """(preset name or 'custom', katas, minutes) from `kata drill PRESET` or `kata drill KATA...`."""
    if not names:
        raise UsageError("name a preset (`kata drill --list` shows them) or the katas to drill, "
                         "e.g. `kata drill attention --minutes 20`")
    if minutes is not None and minutes <= 0:
        raise UsageError("--minutes must be more than 0")
    if len(names) == 1 and names[0] in PRESETS:
        preset = PRESETS[names[0]]
        katas = preset_katas(preset)
        if not katas:
            raise UsageError(f"none of the katas of '{names[0]}' is in the catalogue yet")
        return names[0], katas, minutes or preset.minutes
    if any(n in PRESETS for n in names):
        raise UsageError("give either one preset or some katas, not both")
    katas = list(dict.fromkeys(catalogue.find(n) for n in names))
    return "custom", katas, minutes or MINUTES_PER_STAR * sum(k.difficulty for k in katas)


def fresh_folder(parent: Path) -> Path:
    """parent/20250102-153000 (local time), made new: -2, -3... if that second is taken."""
    stamp = datetime.now().strftime("%Y%m%d-%H%M%S")
    for n in range(1, 1000):
        folder = parent / (stamp if n == 1 else f"{stamp}-{n}")
        try:
            folder.mkdir(parents=True)
            return folder
        except FileExistsError:
            continue
    raise UsageError(f"cannot make a new folder in {parent}")


def make_drill_folder(ws: Path, katas: list[Kata]) -> Path:
    folder = fresh_folder(ws / "drills")
    for kata in katas:
        target = workspace.kata_file(folder, kata)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KATAS / kata.file, target)
    return folder


def active_drill(progress) -> dict | None:
    """The drill running now: not ended, its process alive, its time not over."""
    for d in reversed(progress.drills()):
        if d["ended_at"] is None and _alive(d["pid"]) and datetime.now(timezone.utc) < _deadline(d):
            return d
    return None


def _alive(pid: int | None) -> bool:
    """Whether the process pid runs (psutil: os.kill(pid, 0) would send Ctrl-C on Windows)."""
    if not pid:
        return False
    import psutil

    try:
        return psutil.Process(pid).status() != psutil.STATUS_ZOMBIE
    except psutil.Error:
        return False


def _deadline(drill: dict) -> datetime:
    return parse(drill["started_at"]) + timedelta(minutes=drill["minutes"])


# ----------------------------------------------------------------------------- rounds


@dataclass
class Round:
    """One attempt at one kata: in a drill, or in the workspace between two resets."""

    kata: str
    start: datetime
    known_start: bool = True  # False: began at the first check, so its time to green is unknown
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

    def add_check(self, row: dict, at: datetime) -> None:
        self.attempts += 1
        self.passes += row["status"] == "pass"
        self.status, self.last_at = row["status"], at
        if row["stage"] in STAGES and (self.stage is None or STAGES.index(row["stage"]) > STAGES.index(self.stage)):
            self.stage = row["stage"]
        if row["status"] == "pass" and self.green_at is None:
            self.green_at, self.tries_to_green = at, self.attempts
            if self.drill is not None and row["elapsed"] is not None:
                self.green = row["elapsed"]
            elif self.known_start:
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


def rounds(progress) -> list[Round]:
    """Every round in the history, oldest first."""
    drill_start = {d["id"]: parse(d["started_at"]) for d in progress.drills()}
    rows = sorted([("check", c) for c in progress.checks()] + [("event", e) for e in progress.events()],
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
            open_rounds[key] = Round(kata, start, known_start=drill is not None, drill=drill)
        r = open_rounds[key]
        r.add_check(row, at) if kind == "check" else r.add_event(row)
    return sorted(done + list(open_rounds.values()), key=lambda r: r.start)


# ----------------------------------------------------------------------------- drill scores and reports


def kata_score(r: Round | None, minutes: float) -> int:
    """0..100: green scores 70 plus up to 30 for speed; otherwise 10 per stage reached, at most 50.
    Each hint costs 10, the solution 50."""
    if r is None:
        return 0
    if r.green is not None:
        score = 70 + 30 * max(0.0, 1 - r.green / (minutes * 60))
    else:
        score = min(50, 10 * (STAGES.index(r.stage) + 1)) if r.stage else 0
    return max(0, round(score - 10 * r.hints - 50 * r.solution))


ENDS = ("time", "done", "quit", "interrupted")  # how a drill can end; killed drills have none


def _drill_end(d: dict, active: dict | None) -> str:
    if d["end_reason"]:
        return d["end_reason"]
    return "running" if active and active["id"] == d["id"] else "killed"


def _kata_result(name: str, r: Round | None, minutes: float) -> dict:
    return {"name": name, "status": r.status if r else "not_started", "stage": r.stage if r else None,
            "attempts": r.attempts if r else 0, "first_green_seconds": r.green if r else None,
            "hints": r.hints if r else 0, "solution": bool(r and r.solution), "score": kata_score(r, minutes)}


def drill_summaries(progress) -> list[dict]:
    """Every drill, oldest first, with its per-kata results and score (computed, so killed drills count).
    Drills with the same label compare: the same preset, or for a drill of your own, the same katas."""
    by_drill: dict = {}
    for r in rounds(progress):
        if r.drill is not None:
            by_drill.setdefault(r.drill, {})[r.kata] = r
    active = active_drill(progress)
    summaries = []
    for d in progress.drills():
        names = d["katas"].split()
        results = [_kata_result(name, by_drill.get(d["id"], {}).get(name), d["minutes"]) for name in names]
        label = "custom: " + ", ".join(names) if d["preset"] == "custom" else d["preset"]
        summaries.append({
            "id": d["id"], "preset": d["preset"], "label": label, "started_at": d["started_at"],
            "minutes": d["minutes"], "folder": d["folder"], "end": _drill_end(d, active),
            "allow_hints": bool(d["allow_hints"]),
            "score": round(sum(k["score"] for k in results) / len(results)) if results else 0,
            "green": sum(k["first_green_seconds"] is not None for k in results), "katas": results})
    return summaries


def drill_report(progress, drill_id: int) -> dict:
    """One drill's summary, and the scores of the earlier drills it compares with."""
    summaries = drill_summaries(progress)
    report = next(s for s in summaries if s["id"] == drill_id)
    earlier = [s["score"] for s in summaries if s["id"] < drill_id and s["label"] == report["label"]]
    report["earlier"] = {"count": len(earlier), "scores": earlier,
                         "last": earlier[-1] if earlier else None, "best": max(earlier) if earlier else None}
    return report


def print_drill_report(console: Console, report: dict, lang: str) -> None:
    end = report["end"]
    if end in ENDS:
        console.print(Text(say(lang, f"drill.end.{end}"), style="bold green" if end == "done" else "yellow"))
    table = Table(title=f"{say(lang, 'drill.report')} · {report['label']} · {report['minutes']:g} min",
                  title_justify="left", title_style="bold")
    for column in ("kata", "status", "stage reached", "attempts", "first green", "hints", "score"):
        table.add_column(column, justify="right" if column in ("attempts", "hints", "score") else "left")
    for k in report["katas"]:
        table.add_row(Text(k["name"], style="bold"), status_text(k["status"]), k["stage"] or "–", str(k["attempts"]),
                      clock(k["first_green_seconds"]), str(k["hints"]) + (" + solution" if k["solution"] else ""),
                      str(k["score"]))
    console.print(table)
    delta = ""
    earlier = report["earlier"]
    if earlier["count"]:
        delta = f" ({report['score'] - earlier['last']:+d} vs last)"
    console.print(Text(say(lang, "drill.score", score=report["score"]) + delta, style="bold"))
    if earlier["count"]:
        trend = sparkline(earlier["scores"] + [report["score"]])
        console.print(Text(say(lang, "drill.compare", preset=report["label"], count=earlier["count"],
                                last=earlier["last"], best=earlier["best"], trend=trend)))
    else:
        console.print(Text(say(lang, "drill.first", preset=report["label"]), style="dim"))
    console.print(Text(say(lang, "drill.kept", folder=report["folder"]), style="dim"))


# ----------------------------------------------------------------------------- small renderers

SPARKS = "▁▂▃▄▅▆▇█"


def sparkline(values: list[float]) -> str:
    if not values:
        return ""
    low, high = min(values), max(values)
    span = (high - low) or 1
    return "".join(SPARKS[round((v - low) / span * (len(SPARKS) - 1))] for v in values)


def clock(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    minutes, secs = divmod(int(round(seconds)), 60)
    hours, minutes = divmod(minutes, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def ago(at: datetime | None, lang: str) -> str:
    if at is None:
        return "–"
    days = (datetime.now(timezone.utc) - at).days
    return say(lang, "ago.today") if days < 1 else say(lang, "ago.days", days=days)


def local_time(at: str) -> str:
    return parse(at).astimezone().strftime("%Y-%m-%d %H:%M")


# ----------------------------------------------------------------------------- kata hint


def cmd_hint(args, console: Console) -> int:
    kata = catalogue.find(args.name)
    lang = language(args.lang)
    progress = open_progress(open_workspace(args, console))
    drill = _unlocked_drill(progress, kata, lang)
    items = (catalogue.hints(kata, lang) or catalogue.hints(kata, "en"))[:3]
    if not items:
        console.print(Text(say(lang, "hint.none", kata=kata.id), style="yellow"))
        return EXIT_OK
    level = min(progress.hints_seen(kata.id, drill) + 1, len(items))
    try:
        progress.add_event(kata.id, "hint", str(level), drill)
    except NotRecorded as err:  # a read-only workspace: the hint all the same
        warn(console, str(err))
    if args.json:
        print_json({"kata": kata.id, "level": level, "total": len(items), "hints": items[:level]})
        return EXIT_OK
    names = say(lang, "hint.names").split("|")
    for i, text in enumerate(items[:level], 1):
        console.print(Text(say(lang, "hint.level", level=i, total=len(items), name=names[i - 1]), style="bold cyan"))
        console.print(Text(text), Text(""))
    more = "hint.more" if level < len(items) else "hint.last"
    console.print(Text(say(lang, more, kata=kata.id), style="dim"))
    return EXIT_OK


def _unlocked_drill(progress, kata: Kata, lang: str) -> int | None:
    """Refuse during a drill without --allow-hints; the drill's id if this kata is being drilled."""
    drill = active_drill(progress)
    if drill is None:
        return None
    if not drill["allow_hints"]:
        raise UsageError(say(lang, "locked", until=_deadline(drill).astimezone().strftime("%H:%M:%S")))
    return drill["id"] if kata.id in drill["katas"].split() else None


# ----------------------------------------------------------------------------- kata solution

STEP = re.compile(r"#\s*(\d+)\)\s*(.+)")


def why_lines(source: str) -> list[str]:
    """The reference's numbered step comments, else the first line of each top-level docstring."""
    steps = [f"{m[1]}) {m[2].strip()}" for m in STEP.finditer(source)]
    if steps:
        return steps
    nodes = [n for n in ast.parse(source).body if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    return [f"{n.name}: {ast.get_docstring(n).splitlines()[0]}" for n in nodes if ast.get_docstring(n)]


PITFALLS_HEADINGS = ("## Pitfalls", "## 易错点")


def pitfalls(kata: Kata, lang: str) -> list[str]:
    """The bullet items under the statement's Pitfalls heading, in lang if there is such a statement."""
    path = kata.statement_path(lang)
    lines = (path if path.exists() else kata.statement_path("en")).read_text(encoding="utf-8").splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() in PITFALLS_HEADINGS), len(lines))
    items: list[str] = []
    for line in lines[start + 1:]:
        if line.startswith("## "):
            break
        if line.startswith("- "):
            items.append(line[2:].strip())
        elif items and line.strip():
            items[-1] += " " + line.strip()
    return items


def cmd_solution(args, console: Console) -> int:
    kata = catalogue.find(args.name)
    lang = language(args.lang)
    ws = open_workspace(args, console)
    progress = open_progress(ws)
    drill = _unlocked_drill(progress, kata, lang)
    passed = progress.summary().get(kata.id, {}).get("status") == "pass"
    if not passed and not confirm(console, say(lang, "solution.ask", kata=kata.id), yes=args.yes,
                                  refusal=say(lang, "solution.needs_yes", kata=kata.id)):
        console.print(Text(say(lang, "not_shown"), style="dim"))
        return EXIT_OK
    try:
        progress.add_event(kata.id, "solution", None, drill)
    except NotRecorded as err:  # a read-only workspace: the solution all the same
        warn(console, str(err))
    from rich.syntax import Syntax  # pygments: only here

    from checker.statement import render

    source = (SOLUTIONS / kata.file).read_text(encoding="utf-8")
    console.print(Text(say(lang, "solution.title", kata=kata.id), style="bold"))
    console.print(Syntax(source, "python", line_numbers=True, word_wrap=True))
    console.print(Text(say(lang, "solution.why"), style="bold cyan"))
    for line in why_lines(source):
        console.print(Text(f"  {line}"))
    console.print(Text(say(lang, "solution.pitfalls"), style="bold cyan"))
    console.print(render("\n".join(f"- {item}" for item in pitfalls(kata, lang))))
    return EXIT_OK


# ----------------------------------------------------------------------------- kata reset


def cmd_reset(args, console: Console) -> int:
    katas = list(catalogue.all_katas()) if args.all else [catalogue.find(n) for n in args.names]
    if not katas:
        raise UsageError("name the kata(s) to reset (for example `kata reset attention`) or use --all")
    lang = language(args.lang)
    ws = open_workspace(args, console)
    writable(ws, "reset")  # refused before anything is touched, with the real cause
    progress = open_progress(ws)
    changed = []
    for kata in katas:
        path = workspace.kata_file(ws, kata)
        if path.exists() and path.read_bytes() == (KATAS / kata.file).read_bytes():
            console.print(Text(say(lang, "reset.blank", kata=kata.id), style="dim"))
        else:
            changed.append((kata, path))
    if not changed:
        return EXIT_OK
    if not confirm(console, say(lang, "reset.ask", count=len(changed)), yes=args.yes,
                   refusal=say(lang, "reset.needs_yes")):
        console.print(Text(say(lang, "not_shown"), style="dim"))
        return EXIT_OK
    backups = None
    for kata, path in changed:
        backup = None
        if path.exists():
            backups = backups or fresh_folder(ws / "backups")
            backup = workspace.kata_file(backups, kata)
            backup.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(path, backup)  # kept before anything is overwritten
        path.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(KATAS / kata.file, path)
        progress.add_event(kata.id, "reset", str(backup) if backup else None)
        key = "reset.done" if backup else "reset.restored"
        console.print(Text(say(lang, key, kata=kata.id, backup=backup), style="green"))
    return EXIT_OK


# ----------------------------------------------------------------------------- kata stats


def kata_stats(progress) -> list[dict]:
    """Per kata with any history, in learning order."""
    by_kata: dict[str, list[Round]] = {}
    for r in rounds(progress):
        by_kata.setdefault(r.kata, []).append(r)
    order = {k.id: k.order for k in catalogue.all_katas()}
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


def cmd_stats(args, console: Console) -> int:
    lang = language(args.lang)
    progress = open_progress(open_workspace(args, console))
    katas = kata_stats(progress)
    drills = drill_summaries(progress)
    if args.json:
        print_json({"katas": katas, "drills": drills})
        return EXIT_OK
    if not katas and not drills:
        console.print(Text(say(lang, "stats.none")))
        return EXIT_OK
    table = Table(title=say(lang, "stats.katas"), title_justify="left", title_style="bold")
    table.add_column("kata", no_wrap=True)
    for column in ("tries", "pass", "best", "last", "trend", "hints", "sol.", "practised"):
        table.add_column(column, justify="left" if column in ("trend", "practised") else "right", no_wrap=True)
    for k in katas:
        rate = f"{100 * k['pass_rate']:.0f}%" if k["pass_rate"] is not None else "–"
        last = parse(k["last_at"]) if k["last_at"] else None
        table.add_row(Text(k["name"], style="bold"), str(k["attempts"]), rate, clock(k["best_seconds_to_green"]),
                      clock(k["last_seconds_to_green"]), sparkline(k["seconds_to_green"]), str(k["hints"]),
                      str(k["solutions"]), ago(last, lang))
    console.print(table)
    console.print(Text(say(lang, "stats.green"), style="dim"))
    untouched = len(catalogue.all_katas()) - len({k["name"] for k in katas} & {k.id for k in catalogue.all_katas()})
    if untouched:
        console.print(Text(say(lang, "stats.untouched", count=untouched), style="dim"))
    if drills:
        table = Table(title=say(lang, "stats.drills"), title_justify="left", title_style="bold")
        for column in ("#", "started", "preset", "minutes", "green", "score", "end"):
            table.add_column(column, justify="right" if column in ("#", "minutes", "score") else "left")
        for d in drills:
            table.add_row(str(d["id"]), local_time(d["started_at"]), Text(d["label"]), f"{d['minutes']:g}",
                          f"{d['green']}/{len(d['katas'])}", str(d["score"]), d["end"])
        console.print(table)
        for label in dict.fromkeys(d["label"] for d in drills):
            scores = [d["score"] for d in drills if d["label"] == label]
            console.print(Text(f"{label}: {sparkline(scores)}  (scores {' → '.join(map(str, scores[-8:]))})"))
    return EXIT_OK


# ----------------------------------------------------------------------------- kata next

INTERVALS = (1, 3, 7, 21, 60)  # days until the next review after 0, 1, 2, 3, 4+ easy rounds in a row


def suggestions(progress, lang: str) -> list[dict]:
    """What to practise, best first: work in progress, due reviews (most overdue first), new katas in
    learning order, then reviews that are not due yet."""
    by_kata: dict[str, list[Round]] = {}
    for r in rounds(progress):
        if r.tried:
            by_kata.setdefault(r.kata, []).append(r)
    status = {k: v["status"] for k, v in progress.summary().items()}
    now = datetime.now(timezone.utc)
    going, due, new, early = [], [], [], []
    for kata in catalogue.all_katas():
        tried = by_kata.get(kata.id, [])
        item = {"name": kata.id, "title": kata.title}
        if status.get(kata.id) in ("fail", "error", "timeout"):
            going.append({**item, "kind": "continue", "command": f"kata watch {kata.id}",
                          "reason": say(lang, "next.continue", status=status[kata.id])})
            continue
        if not tried:
            new.append({**item, "kind": "new", "command": f"kata show {kata.id}; kata watch {kata.id}",
                        "reason": say(lang, "next.new")})
            continue
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
            reason = say(lang, "next.hard", why=hard, ago=ago(when, lang))
        elif waited >= interval:
            reason = say(lang, "next.due", ago=ago(when, lang))
        else:
            reason = say(lang, "next.later", days=max(1, round(interval - waited)))
        entry = {**item, "kind": "review", "command": f"kata drill {kata.id}", "reason": reason,
                 "due_in_days": round(max(0.0, interval - waited), 1)}
        (due if waited >= interval else early).append((-waited / interval, entry))
    return going + _by_urgency(due) + new + _by_urgency(early)


def _by_urgency(pairs: list[tuple[float, dict]]) -> list[dict]:
    return [entry for _, entry in sorted(pairs, key=lambda pair: pair[0])]


def cmd_next(args, console: Console) -> int:
    lang = language(args.lang)
    progress = open_progress(open_workspace(args, console))
    picks = suggestions(progress, lang)[: args.count]
    if args.json:
        print_json({"next": picks})
        return EXIT_OK
    console.print(Text(say(lang, "next.title"), style="bold"))
    for i, pick in enumerate(picks, 1):
        console.print(Text.assemble((f"{i}. ", "dim"), (pick["name"], "bold"), (f"  {pick['title']}", "")))
        console.print(Text(f"   {pick['reason']}", style="cyan" if i == 1 else "dim"))
        console.print(Text(f"   {say(lang, 'next.run')}: {pick['command']}", style="dim"))
    if all(p["kind"] == "review" and p.get("due_in_days") for p in picks):
        console.print(Text(say(lang, "next.done"), style="green"))
    return EXIT_OK
