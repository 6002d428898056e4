"""`kata list`: the katas in learning order, each with its level, its status in your workspace, your fastest
passing run and its title, grouped by track.

Plain aligned columns, not a rich Table: measuring every cell of ~55 rows cost more than importing rich
itself (bench/bench.py holds `kata list` to 2x an import of rich.console).
"""

from __future__ import annotations

from pathlib import Path

from rich.cells import cell_len
from rich.console import Console
from rich.text import Text

from checker import catalogue
from checker.state import workspace
from checker.errors import EXIT_OK
from checker.lang import language, say, speaking, tr
from checker.state.progress import ProgressError, open_progress
from checker.app.terminal import print_json, warn
from checker.app.terminal import open_workspace


def cmd_list(args, console: Console) -> int:
    ws = open_workspace(args, console)
    summary = _summary(ws, console)
    lang = language(args.lang)
    from checker.state.progress import file_hash

    rows = []
    for k in catalogue.all_katas():
        seen = summary.get(k.id, {})
        checked = seen.get("file_hash")  # None: never checked, or checked before hashes were kept
        rows.append({"name": k.id, "track": k.track, "part": k.part, "title": k.title_in(lang),
                     "difficulty": k.difficulty, "status": seen.get("status", "not_started"),
                     "attempts": seen.get("attempts", 0), "followups": seen.get("followups", 0),
                     "fastest_run_seconds": seen.get("fastest_run"),
                     "changed_since_check": bool(checked) and file_hash(workspace.kata_file(ws, k)) != checked})
    if args.json:
        print_json({"katas": rows})
        return EXIT_OK
    from checker.app.terminal import duration, status_text

    with speaking(lang):
        statuses = [status_text(r["status"]) if r["attempts"] else Text(say(lang, "list.new"), style="dim")
                    for r in rows]
    for r, status in zip(rows, statuses):
        if r["status"] == "pass" and r["followups"]:
            status.append(" ?", style="bold yellow")  # passed, with follow-up questions still open
        if r["changed_since_check"]:
            status.append(" *", style="bold cyan")  # the file changed since its last check
    runs = [duration(r["fastest_run_seconds"]) for r in rows]
    shows_runs = any(r["fastest_run_seconds"] is not None for r in rows)  # a column of dashes: dropped
    heads = {"kata": tr("kata"), "level": tr("level"), "status": tr("status"), "run": tr("run time"), "title": tr("title")}
    name_w = max(len(r["name"]) for r in rows)
    level_w = max(5, cell_len(heads["level"]))
    status_w = max(cell_len(heads["status"]), *(s.cell_len for s in statuses))
    run_w = max(cell_len(heads["run"]), *(len(b) for b in runs)) + 2 if shows_runs else 0
    indent = 2 + 2 + name_w + 2 + level_w + 2 + status_w + run_w + 2  # where the title column starts
    groups = list(dict.fromkeys((k.part, k.track) for k in catalogue.all_katas()))  # in learning order

    def pad(text: str, width: int) -> str:  # by terminal cells: a Chinese character takes two
        return text + " " * (width - cell_len(text))

    run_head = f"{' ' * (run_w - cell_len(heads['run']))}{heads['run']}" if shows_runs else ""
    columns = (f" #  {pad(heads['kata'], name_w)}  {pad(heads['level'], level_w)}  {pad(heads['status'], status_w)}"
               f"{run_head}  {heads['title']}")
    from checker.app.terminal import Wrapped, wrap

    for part, track in groups:
        heading = say(lang, "list.track" if part == "seeds" else f"list.track_{part}", track=track)
        lines = Text.assemble((heading, "bold"), "\n", (columns, "dim"))
        group = [i for i, k in enumerate(catalogue.all_katas()) if (k.part, k.track) == (part, track)]
        for n, i in enumerate(group, 1):
            lines.append(f"\n{n:>2}  ")
            lines.append(f"{rows[i]['name']:<{name_w}}", style="bold")
            lines.append(f"  {pad('★' * rows[i]['difficulty'], level_w)}  ")
            lines.append_text(statuses[i])
            lines.append(" " * (status_w - statuses[i].cell_len) + (f"{runs[i]:>{run_w}}" if shows_runs else "") + "  ")
            at = indent if console.width - indent >= 20 else 4  # a narrow terminal: the title on lines of its own
            title = [line.plain for line in wrap(Text(rows[i]["title"]), console.width - at)]  # CJK-aware
            lines.append(title[0] if at == indent else f"\n{' ' * at}{title[0]}")
            for more in title[1:]:  # a long title continues under itself
                lines.append(f"\n{' ' * at}{more}")
        console.print(lines, no_wrap=True, overflow="fold")
        console.print()
    with speaking(lang):
        passed = status_text("pass").plain
    notes = [tr("Workspace: {workspace}.", workspace=ws),
             tr("Check one with `kata check NAME`; NumPy katas are numpy/NAME."),
             tr("run time: the fastest passing run of your code.") if shows_runs else "",
             tr("{passed} ? = passed with follow-up questions open (the check shows them; --strict fails them).",
               passed=passed),
             tr("* = the file changed since its last check.") if any(r["changed_since_check"] for r in rows) else ""]
    console.print(Wrapped(("" if lang == "zh" else " ").join(n for n in notes if n), style="dim"))  # 。 needs no space
    return EXIT_OK


def _summary(ws: Path, console: Console) -> dict:
    try:
        progress = open_progress(ws)
    except ProgressError as err:
        warn(console, str(err))
        return {}
    try:
        return progress.summary()
    except ProgressError as err:
        warn(console, str(err))
        return {}
    finally:
        progress.close()
