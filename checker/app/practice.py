"""hint, solution, reset, stats and next, plus what drills keep: presets, folders, the drill report.

The commands read the progress database and draw; what the history means (rounds, scores, stats,
what to practise next) is computed by checker.state.history from the rows read here. Never imports torch.
"""

from __future__ import annotations

import os
import random
import shutil
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from rich.padding import Padding
from rich.table import Table
from rich.text import Text

from checker import catalogue
from checker.app import statement
from checker.state import history, workspace
from checker.catalogue import Kata
from checker.lang import language, say, speaking, tr
from checker.catalogue import KATAS, SOLUTIONS
from checker.state.progress import NotRecorded
from checker.errors import EXIT_OK, UsageError
from checker.state.progress import open_progress
from checker.app.terminal import Wrapped, confirm, print_json, status_text, warn
from checker.app.terminal import open_workspace
from checker.state.workspace import writable

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
    "fine-tune-serve": Preset("Fine-tune & serve", 60, ("lora", "moe", "mla", "speculative_decoding")),
    "rlhf-objectives": Preset("RLHF objectives", 40, ("dpo_loss", "grpo_loss")),
    "training-by-hand": Preset("Training by hand", 40, ("dropout", "batch_norm", "adamw")),
    "efficient-attention": Preset("Efficient attention", 50, ("linear_attention", "flash_attention", "relative_position_bias")),
    "beyond-the-model": Preset("Beyond the model", 60, ("ppo_loss", "quantize_int8", "attention_merge", "muon")),
}
MINUTES_PER_STAR = 10  # a drill of your own choice: 10 minutes per star of difficulty


def _titled(preset: Preset, lang: str) -> str:
    with speaking(lang):
        return tr(preset.title)  # the titles' Chinese is in checker/zh.toml


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
    rows = [{"name": name, "title": _titled(p, lang), "minutes": p.minutes,
             "katas": [k for k in p.katas if k in known],
             "difficulties": list(p.difficulties)} for name, p in PRESETS.items()]
    if as_json:
        print_json({"presets": rows})
        return EXIT_OK
    table = Table(title=say(lang, "drill.presets"), title_justify="left", title_style="bold")
    longest = max((len(k) + 1 for row in rows for k in row["katas"]), default=0)  # a name and its comma
    for column in ("preset", "minutes", "what", "katas"):
        table.add_column(say(lang, f"drill.col.{column}"), justify="right" if column == "minutes" else "left",
                         no_wrap=column == "preset", max_width=17 if column == "what" else None,
                         min_width=longest if column == "katas" else None,
                         overflow="fold")  # kata names never cut, nor parted from their comma
    for row in rows:
        katas = ", ".join(row["katas"]) or say(lang, "drill.random", levels=", ".join(map(str, row["difficulties"])))
        table.add_row(Text(row["name"], style="bold"), f"{row['minutes']:g}", Text(row["title"]), Text(katas))
    console.print(table)
    console.print(Text(say(lang, "drill.usage"), style="dim"))
    return EXIT_OK


def choose_drill(names: list[str], minutes: float | None) -> tuple[str, list[Kata], float]:
    """(preset name or 'custom', katas, minutes) from `kata drill PRESET` or `kata drill KATA...`."""
    if not names:
        raise UsageError(tr("name a preset (`kata drill --list` shows them) or the katas to drill, "
                           "e.g. `kata drill attention --minutes 20`"))
    if minutes is not None and minutes <= 0:
        raise UsageError(tr("--minutes must be more than 0"))
    if len(names) == 1 and names[0] in PRESETS:
        preset = PRESETS[names[0]]
        katas = preset_katas(preset)
        if not katas:
            raise UsageError(tr("none of the katas of '{preset}' is in the catalogue yet", preset=names[0]))
        return names[0], katas, minutes or preset.minutes
    if any(n in PRESETS for n in names):
        raise UsageError(tr("give either one preset or some katas, not both"))
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
    raise UsageError(tr("cannot make a new folder in {parent}", parent=parent))


def make_drill_folder(ws: Path, katas: list[Kata]) -> Path:
    folder = fresh_folder(ws / "drills")
    for kata in katas:
        target = workspace.kata_file(folder, kata)
        target.parent.mkdir(parents=True, exist_ok=True)
        workspace.write_atomically(target, (KATAS / kata.file).read_bytes())
    return folder


def active_drill(progress) -> dict | None:
    """The drill running now: not ended, its process alive, its time not over."""
    for d in reversed(progress.drills()):
        if d["ended_at"] is None and _alive(d["pid"]) and datetime.now(timezone.utc) < _deadline(d):
            return d
    return None


def _alive(pid: int | None) -> bool:
    """Whether the process pid runs (psutil: os.kill(pid, 0) would send Ctrl-C on Windows)."""
    from checker.sandbox import processes  # psutil: only when a drill is looked at

    return bool(pid) and processes.alive(pid)


def _deadline(drill: dict) -> datetime:
    return history.parse(drill["started_at"]) + timedelta(minutes=drill["minutes"])


# ----------------------------------------------------------------------------- history, read from the database


def records(progress) -> history.Records:
    """The rows history is computed from, and the drill running now."""
    running = active_drill(progress)
    return history.Records(progress.checks(), progress.events(), progress.drills(), running and running["id"],
                           progress.answers())


def drill_report(progress, drill_id: int) -> dict:
    """One drill's summary and the earlier scores it compares with (checker.state.history.drill_report)."""
    return history.drill_report(records(progress), drill_id)


def suggestions(progress, lang: str) -> list[dict]:
    """What to practise now, best first (checker.state.history.suggestions)."""
    return history.suggestions(records(progress), catalogue.all_katas(), lang, datetime.now(timezone.utc))


def print_drill_report(console: Console, report: dict, lang: str) -> None:
    end = report["end"]
    if end in history.ENDS:
        console.print(Text(say(lang, f"drill.end.{end}"), style="bold green" if end == "done" else "yellow"))
    with speaking(lang):
        label = tr("custom: {katas}", katas=", ".join(k["name"] for k in report["katas"])) \
            if report["preset"] == "custom" else report["label"]
        title = tr("{report} · {drill} · {minutes} min", report=say(lang, "drill.report"), drill=label,
                  minutes=f"{report['minutes']:g}")
        cells = [{"kata": Text(k["name"], style="bold"), "status": status_text(k["status"]),
                  "stage": say(lang, f"stage.{k['stage']}") if k["stage"] else "–", "tries": str(k["attempts"]),
                  "to green": clock(k["first_green_seconds"]), "score": str(k["score"]),
                  "hints": tr("{hints} + sol.", hints=k["hints"]) if k["solution"] else str(k["hints"])}
                 for k in report["katas"]]

        def build(columns: list[str]) -> Table:
            table = Table(title=title, title_justify="left", title_style="bold", box=None, pad_edge=False)
            for column in columns:
                table.add_column(tr(column), justify="right" if column in ("tries", "hints", "score") else "left",
                                 overflow="fold")
            for row in cells:
                table.add_row(*(row[column] for column in columns))
            return table

        table = _fitting(console, build, ("kata", "status", "stage", "tries", "to green", "hints", "score"),
                         ("tries", "stage"))
        console.print(table)
        earlier = report["earlier"]
        score = say(lang, "drill.score", score=report["score"])
        if earlier["count"]:
            score = tr("{score} ({change} vs last)", score=score, change=f"{report['score'] - earlier['last']:+d}")
        console.print(Text(score, style="bold"))
        if report.get("quiz"):
            console.print(Text(say(lang, "drill.quiz_score", **report["quiz"]), style="bold"))
    if earlier["count"]:
        trend = sparkline(earlier["scores"] + [report["score"]])
        console.print(Wrapped(say(lang, "drill.compare", preset=label, count=earlier["count"],
                                  last=earlier["last"], best=earlier["best"], trend=trend)))
    else:
        console.print(Wrapped(say(lang, "drill.first", preset=label), style="dim"))
    console.print(Wrapped(say(lang, "drill.kept", folder=report["folder"]), style="dim"))


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


def local_time(at: str) -> str:
    return history.parse(at).astimezone().strftime("%Y-%m-%d %H:%M")


# ----------------------------------------------------------------------------- kata hint


def cmd_hint(args, console: Console) -> int:
    kata = catalogue.find(args.name)
    lang = language(args.lang)
    progress = open_progress(open_workspace(args, console))
    drill = _unlocked_drill(progress, kata, lang)
    items = statement.hints(kata, lang)[:3]
    if not items:
        console.print(Wrapped(say(lang, "hint.none", kata=kata.id), style="yellow"))
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
        console.print(Wrapped(say(lang, "hint.level", level=i, total=len(items), name=names[i - 1]), style="bold cyan"))
        # kata show's drawer: prose wraps CJK-aware, `code` moves whole, a code block keeps its lines (never cut)
        console.print(statement.render(text), crop=False)
        console.print()
    more = "hint.more" if level < len(items) else "hint.last"
    console.print(Wrapped(say(lang, more, kata=kata.id), style="dim"))
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

def cmd_solution(args, console: Console) -> int:
    kata = catalogue.find(args.name)
    lang = language(args.lang)
    ws = open_workspace(args, console)
    progress = open_progress(ws)
    drill = _unlocked_drill(progress, kata, lang)
    passed = progress.summary().get(kata.id, {}).get("status") == "pass"
    if not passed and not confirm(console, say(lang, "solution.ask", kata=kata.id), yes=args.yes,
                                  refusal=say(lang, "solution.needs_yes", kata=kata.id)):
        console.print(Wrapped(say(lang, "not_shown"), style="dim"))
        return EXIT_OK
    try:
        progress.add_event(kata.id, "solution", None, drill)
    except NotRecorded as err:  # a read-only workspace: the solution all the same
        warn(console, str(err))
    from rich.syntax import Syntax  # pygments: only here

    source = (SOLUTIONS / kata.file).read_text(encoding="utf-8")
    console.print(Wrapped(say(lang, "solution.title", kata=kata.id), style="bold"))
    # Code is never re-flowed: where a line is wider than the terminal, the lines are drawn as written (no
    # padding to the width) and a long one runs past the edge, still one line when copied.
    number_column = len(str(source.count("\n") + 1)) + 3
    fits = max(map(cell_len, source.splitlines()), default=0) + number_column <= console.width
    console.print(Syntax(source, "python", line_numbers=True), no_wrap=not fits, crop=False)
    console.print(Wrapped(say(lang, "solution.why"), style="bold cyan"))
    for line in statement.steps(source, lang, kata):
        console.print(Padding(Wrapped(line), (0, 0, 0, 2), expand=False))
    console.print(Wrapped(say(lang, "solution.pitfalls"), style="bold cyan"))
    console.print(statement.render("\n".join(f"- {item}" for item in statement.pitfalls(kata, lang))))
    return EXIT_OK


# ----------------------------------------------------------------------------- kata reset


def _same_as_stub(path: Path, kata) -> bool:
    try:
        return workspace.read_source(path) == (KATAS / kata.file).read_bytes()
    except (OSError, workspace.WorkspaceError):
        return False


def cmd_reset(args, console: Console) -> int:
    katas = list(catalogue.all_katas()) if args.all else [catalogue.find(n) for n in args.names]
    if not katas:
        raise UsageError(tr("name the kata(s) to reset (for example `kata reset attention`) or use --all"))
    lang = language(args.lang)
    ws = open_workspace(args, console)
    writable(ws, "reset")  # refused before anything is touched, with the real cause
    progress = open_progress(ws)
    changed = []
    for kata in katas:
        path = workspace.kata_file(ws, kata)
        if _same_as_stub(path, kata):
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
        if path.exists() or path.is_symlink():
            backups = backups or fresh_folder(ws / "backups")
            backup = workspace.kata_file(backups, kata)
            backup.parent.mkdir(parents=True, exist_ok=True)
            if path.is_symlink() or not path.is_file():  # a link or a pipe: kept as it is, never read
                os.replace(path, backup)
            else:
                shutil.copy2(path, backup)  # kept before anything is overwritten
        path.parent.mkdir(parents=True, exist_ok=True)
        workspace.write_atomically(path, (KATAS / kata.file).read_bytes())
        progress.add_event(kata.id, "reset", str(backup) if backup else None)
        key = "reset.done" if backup else "reset.restored"
        console.print(Text(say(lang, key, kata=kata.id, backup=backup), style="green"))
    return EXIT_OK


# ----------------------------------------------------------------------------- kata stats


# The per-kata columns, and the order the low-value ones go in when the table is wider than the terminal.
STATS_COLUMNS = ("kata", "tries", "pass", "to green", "last", "trend", "hints", "sol.", "practised")
STATS_DROPPED = ("trend", "last", "sol.", "hints", "practised", "pass")
DRILL_ENDS = {"time": "time is up", "done": "all green", "quit": "quit", "interrupted": "interrupted",
              "killed": "killed", "running": "running"}


def _fitting(console: Console, build, columns: tuple[str, ...], droppable: tuple[str, ...]) -> Table:
    """build(columns) less the fewest of droppable (in that order: low-value columns) that make it fit the terminal."""
    columns = list(columns)
    table = build(columns)
    for dropped in droppable:
        if console.measure(table, options=console.options.update_width(10_000)).maximum <= console.width:
            break
        columns.remove(dropped)
        table = build(columns)
    return table


def cmd_stats(args, console: Console) -> int:
    lang = language(args.lang)
    progress = open_progress(open_workspace(args, console))
    rows = records(progress)
    katas = history.kata_stats(rows, catalogue.all_katas())
    drills = history.drill_summaries(rows)
    asked = history.quiz_stats(rows, datetime.now(timezone.utc))
    if args.json:
        print_json({"katas": katas, "drills": drills, "quiz": asked})
        return EXIT_OK
    if not katas and not drills and not asked:
        console.print(Text(say(lang, "stats.none")))
        return EXIT_OK
    now = datetime.now(timezone.utc)
    with speaking(lang):
        cells = [{"kata": Text(k["name"], style="bold"), "tries": str(k["attempts"]),
                  "pass": f"{100 * k['pass_rate']:.0f}%" if k["pass_rate"] is not None else "–",
                  "to green": clock(k["best_seconds_to_green"]), "last": clock(k["last_seconds_to_green"]),
                  "trend": sparkline(k["seconds_to_green"][-8:]), "hints": str(k["hints"]), "sol.": str(k["solutions"]),
                  "practised": history.ago(history.parse(k["last_at"]) if k["last_at"] else None, lang, now)}
                 for k in katas]

        def build(columns: list[str]) -> Table:
            # Plain aligned columns; nothing is cut: a kata name keeps its line, a low-value column goes first.
            table = Table(title=tr("Per kata"), title_justify="left", title_style="bold", box=None, pad_edge=False)
            for column in columns:
                table.add_column(tr(column), justify="left" if column in ("kata", "trend", "practised") else "right",
                                 overflow="fold")
            for row in cells:
                table.add_row(*(row[column] for column in columns))
            return table

        console.print(_fitting(console, build, STATS_COLUMNS, STATS_DROPPED))
        console.print(Wrapped(tr("to green: your shortest time from the start of a round (a drill's start, a reset, "
                              "or else the kata's first check) to its first pass; last: the latest round's; "
                              "tries: checks; pass: the share that passed; sol.: solutions seen."), style="dim"))
        untouched = len(catalogue.all_katas()) - len({k["name"] for k in katas} & {k.id for k in catalogue.all_katas()})
        if untouched:
            console.print(Wrapped(say(lang, "stats.untouched", count=untouched), style="dim"))
        if drills:
            _print_drills(console, drills)
        if asked:
            _print_quiz(console, asked)
    return EXIT_OK


def _print_quiz(console: Console, asked: dict) -> None:
    """The quiz per topic (spoken in the language being spoken)."""
    from checker.quiz import TOPICS

    table = Table(title=tr("Quiz"), title_justify="left", title_style="bold", box=None, pad_edge=False)
    for column in ("topic", "questions", "answers", "share right", "due"):
        table.add_column(tr(column), justify="left" if column == "topic" else "right", overflow="fold")
    for row in asked["topics"]:
        table.add_row(Text(tr(TOPICS.get(row["topic"], row["topic"]))), str(row["questions"]), str(row["answered"]),
                      f"{100 * row['right'] / row['answered']:.0f}%", str(row["due"]))
    console.print(table)
    console.print(Wrapped(tr("{due} question(s) due now: `kata quiz` asks them first.", due=asked["due"]), style="dim"))


def _print_drills(console: Console, drills: list[dict]) -> None:
    """The drills, oldest first, and each preset's scores so far (spoken in the language being spoken)."""
    table = Table(title=tr("Drills"), title_justify="left", title_style="bold", box=None, pad_edge=False)
    for column in ("#", "started", "preset", "minutes", "green", "score", "end"):
        table.add_column(tr(column), justify="right" if column in ("#", "minutes", "score") else "left",
                         overflow="fold")
    labels = {}
    for d in drills:
        names = ", ".join(k["name"] for k in d["katas"])
        labels[d["label"]] = tr("custom: {katas}", katas=names) if d["preset"] == "custom" else d["preset"]
        table.add_row(str(d["id"]), local_time(d["started_at"]), Text(labels[d["label"]]), f"{d['minutes']:g}",
                      f"{d['green']}/{len(d['katas'])}", str(d["score"]), tr(DRILL_ENDS.get(d["end"], d["end"])))
    console.print(table)
    for label, shown in labels.items():
        scores = [d["score"] for d in drills if d["label"] == label]
        console.print(Wrapped(tr("{preset}: {trend}  (scores {scores})", preset=shown, trend=sparkline(scores),
                              scores=" → ".join(map(str, scores[-8:])))))




# ----------------------------------------------------------------------------- kata next

def cmd_next(args, console: Console) -> int:
    lang = language(args.lang)
    progress = open_progress(open_workspace(args, console))
    picks = suggestions(progress, lang)[: args.count]
    if args.json:
        print_json({"next": picks})
        return EXIT_OK
    console.print(Text(say(lang, "next.title"), style="bold"))
    with speaking(lang):
        for i, pick in enumerate(picks, 1):  # each line wraps CJK-aware under its own indent, never cut
            console.print(Wrapped(Text.assemble((f"{i}. ", "dim"), (pick["name"], "bold"), f"  {pick['title']}")))
            console.print(Padding(Wrapped(pick["reason"], style="cyan" if i == 1 else "dim"), (0, 0, 0, 3), expand=False))
            console.print(Padding(Wrapped(tr("run: {command}", command=pick["command"]), style="dim"),
                                  (0, 0, 0, 3), expand=False))
    if all(p["kind"] == "review" and p.get("due_in_days") for p in picks):
        console.print(Wrapped(say(lang, "next.done"), style="green"))
    return EXIT_OK
