"""Renders check results with rich. Results are data (checker/results.py); this only draws them.

User-provided text (messages quoting their code, tracebacks, printed output) is always wrapped
in Text objects, never parsed as markup, so `[mask]` in a message stays `[mask]`.
"""

from __future__ import annotations

from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from checker.lang import say, spoken, t
from checker.terminal import STATUS_STYLE, Wrapped, duration, marks, status_text
from checker.results import STAGES  # noqa: F401 - the screens import it from here too


def stage_bar(result) -> Text:
    """structure ▸ shapes ▸ masking ▸ numerics ▸ hygiene, each coloured by how it went."""
    bar = Text()
    mark_of = marks()
    present = [s for s in STAGES if any(c.stage == s for c in result.checks)]
    for i, stage in enumerate(present):
        checks = [c for c in result.checks if c.stage == stage]
        if all(c.passed for c in checks):
            style, mark = "green", mark_of["pass"]
        elif all(c.skipped for c in checks):
            style, mark = "dim", mark_of["skipped"]
        else:
            style, mark = "red", mark_of["fail"]
        bar.append(f"{mark} {say(spoken(), 'stage.' + stage)}", style=style)
        if i < len(present) - 1:
            bar.append(f" {mark_of['next']} ", style="dim")
    return bar


def heatmap(result) -> Table:
    """Your attention weights beside the expected ones: one query per line, darker = more weight."""
    maps = result.weights
    mark_of = marks()
    shades = mark_of["shades"]
    grid = Table.grid(padding=(0, 3))
    grid.add_column()
    grid.add_column()

    def draw(matrix, other) -> Text:
        text = Text()
        for i, row in enumerate(matrix):
            text.append(f"q{i:<2} ", style="dim")
            for j, w in enumerate(row):
                leaked = other is not None and other[i][j] == 0 and w != 0
                if w != w:  # NaN
                    text.append("NaN", style="bold white on red")
                    continue
                level = max(0.0, min(1.0, w))
                glyph = f" {mark_of['skipped']} " if level == 0 else shades[min(len(shades) - 1, int(level * len(shades)))] * 3
                shade = int(255 - 200 * level)
                text.append(f" {mark_of['fail']} " if leaked else glyph,
                            style="bold white on red" if leaked else f"rgb(40,40,160) on rgb({shade},{shade},255)")
            if i < len(matrix) - 1:
                text.append("\n")
        return text

    grid.add_row(Text(t("your weights"), style="bold"), Text(t("expected"), style="bold"))
    grid.add_row(draw(maps["user"], maps["expected"]), draw(maps["expected"], None))
    return grid


def _without_diagnosis(message: str) -> str:
    """A failure message without the '. Diagnosis: ...' that kit.Fail appends, in either language."""
    joint = t("{message}. Diagnosis: {diagnosis}").split("{message}")[1].split("{diagnosis}")[0]
    return message.split(joint)[0]


def where(path: str, line: int) -> str:
    """'→ line 18: out = x + sublayer(h)': the line of the user's file a failed check points at."""
    from checker.workspace import WorkspaceError, read_source

    try:
        lines = read_source(Path(path)).decode("utf-8", errors="replace").splitlines()
        code = lines[line - 1].strip() if 0 < line <= len(lines) else ""
    except (OSError, WorkspaceError):
        code = ""
    return t("→ line {line}: {code}", line=line, code=code) if code else t("→ line {line}", line=line)


def kata_panel(result, *, verbose: bool = False) -> Panel:
    rows: list = [Text(result.file, style="dim")]
    if result.status == "not_started":
        rows.append(Text.assemble((t("Not started: "), "yellow"), (
            t("the file still raises NotImplementedError. Write the body, then check again (`kata show {kata}` "
              "prints the task).", kata=result.name), "")))
    elif result.checks:
        rows.append(stage_bar(result))
        rows.append(Text(""))
        checks = Table.grid(padding=(0, 1))  # a grid keeps wrapped messages indented under their check
        checks.add_column(width=2, justify="right")
        checks.add_column(ratio=1)
        mark_of = marks()
        for c in result.checks:
            if c.skipped and not verbose:
                continue
            mark = (mark_of["pass"], "green") if c.passed else (mark_of["fail"], "red")
            if c.passed and c.message and c.kind != "core":
                mark = ("?", "yellow")  # accepted, with a note below
            checks.add_row(Text(mark[0], style=mark[1]), Wrapped(c.name, style="" if c.passed else "bold"))
            if c.message and not c.passed:
                message = _without_diagnosis(c.message)  # the diagnosis gets its own line below
                checks.add_row(Text(""), Wrapped(message, style="red"))
                if c.line:
                    checks.add_row(Text(""), Wrapped(where(result.file, c.line), style="cyan"))
        rows.append(checks)
        skipped = sum(c.skipped for c in result.checks)
        if skipped and not verbose:
            rows.append(Text(t(" · {count} more check(s) skipped until the ones above pass", count=skipped), style="dim"))
    if result.diagnosis:
        rows.append(Wrapped(Text.assemble(("\n" + t("Diagnosis: "), "bold yellow"), (result.diagnosis, "yellow"))))
    notes = [c for c in result.followups() if c.passed]
    if notes:
        rows.append(Text("\n" + t("Accepted, with what an interviewer would ask next (--strict fails these):"),
                         style="bold yellow"))
        for c in notes:
            label = t("? accepted variant: ") if c.kind == "variant" else t("? follow-up: ")
            rows.append(Wrapped(Text.assemble((label, "bold yellow"), (c.message, "yellow"))))
    if result.weights:
        rows.append(Text("\n" + t("Attention weights, batch 0, head 0, {case} (darker = more weight; {leak} = weight where "
                                "the expected one is 0):", case=result.weights["case"], leak=marks()["fail"]), style="bold"))
        rows.append(heatmap(result))
    if result.error and result.status != "not_started":
        rows.append(Text("\n" + (t("Your code raised:") if result.checks else t("Your file could not be loaded:")),
                         style="bold"))
        rows.append(Text(result.error.rstrip()))
    if result.output.strip():
        rows.append(Text("\n" + t("Your code printed:"), style="bold"))
        rows.append(Text(result.output.rstrip(), style="dim"))
    if result.user_seconds is not None and result.status in ("pass", "fail"):
        ratio = (t(" ({ratio:.1f}× the reference)", ratio=result.user_seconds / result.reference_seconds)
                 if result.reference_seconds else "")
        rows.append(Text("\n" + t("Time in your code {user}, reference {reference}{ratio}; whole check {seconds:.2f} s",
                                  user=duration(result.user_seconds), reference=duration(result.reference_seconds),
                                  ratio=ratio, seconds=result.seconds), style="dim"))
    title = Text.assemble((f" {result.name} ", "bold"), ("· ", "dim"), status_text(result.status),
                          (f" · {result.seconds:.2f} s ", "dim"))
    return Panel(Group(*rows), title=title, title_align="left",
                 border_style=STATUS_STYLE.get(result.status, "").replace("bold ", ""))


def summary_table(results) -> Table:
    table = Table(title=t("Summary"), title_justify="left")
    for column in ("kata", "status", "checks", "stage reached", "seconds"):
        table.add_column(t(column), justify="right" if column in ("checks", "seconds") else "left")
    for r in results:
        passed = sum(c.passed for c in r.checks)
        table.add_row(r.name, status_text(r.status), f"{passed}/{len(r.checks)}" if r.checks else "–",
                      say(spoken(), f"stage.{r.stage}") if r.stage else "–", f"{r.seconds:.2f}")
    return table


def print_results(console: Console, results, *, verbose: bool = False) -> None:
    compact = len(results) > 3 and not verbose
    for r in results:
        if compact and r.status == "not_started":
            continue  # the summary lists them; a wall of identical panels helps nobody
        console.print(kata_panel(r, verbose=verbose))
    if len(results) > 1:
        console.print(summary_table(results))
