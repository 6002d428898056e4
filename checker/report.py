"""Renders check results with rich. Results are data (checker/results.py); this only draws them.

User-provided text (messages quoting their code, tracebacks, printed output) is always wrapped
in Text objects, never parsed as markup, so `[mask]` in a message stays `[mask]`.
"""

from __future__ import annotations

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from checker.results import STAGES  # noqa: F401 - the screens import it from here too
STATUS_STYLE = {"pass": "bold green", "fail": "bold red", "not_started": "bold yellow",
                "error": "bold red", "timeout": "bold magenta"}
STATUS_LABEL = {"pass": "PASS", "fail": "FAIL", "not_started": "NOT STARTED", "error": "ERROR", "timeout": "TIMEOUT"}


def status_text(status: str) -> Text:
    return Text(STATUS_LABEL.get(status, status), style=STATUS_STYLE.get(status, ""))


def duration(seconds: float | None) -> str:
    if seconds is None:
        return "–"
    return f"{seconds * 1e6:.0f} µs" if seconds < 1e-3 else f"{seconds * 1e3:.1f} ms"


def stage_bar(result) -> Text:
    """structure ▸ shapes ▸ masking ▸ numerics ▸ hygiene, each coloured by how it went."""
    bar = Text()
    present = [s for s in STAGES if any(c.stage == s for c in result.checks)]
    for i, stage in enumerate(present):
        checks = [c for c in result.checks if c.stage == stage]
        if all(c.passed for c in checks):
            style, mark = "green", "✓"
        elif all(c.skipped for c in checks):
            style, mark = "dim", "·"
        else:
            style, mark = "red", "✗"
        bar.append(f"{mark} {stage}", style=style)
        if i < len(present) - 1:
            bar.append(" ▸ ", style="dim")
    return bar


SHADES = "░▒▓█"


def heatmap(result) -> Table:
    """Your attention weights beside the expected ones: one query per line, darker = more weight."""
    maps = result.weights
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
                glyph = " · " if level == 0 else SHADES[min(len(SHADES) - 1, int(level * len(SHADES)))] * 3
                shade = int(255 - 200 * level)
                text.append(" ✗ " if leaked else glyph,
                            style="bold white on red" if leaked else f"rgb(40,40,160) on rgb({shade},{shade},255)")
            if i < len(matrix) - 1:
                text.append("\n")
        return text

    grid.add_row(Text("your weights", style="bold"), Text("expected", style="bold"))
    grid.add_row(draw(maps["user"], maps["expected"]), draw(maps["expected"], None))
    return grid


def kata_panel(result, *, verbose: bool = False) -> Panel:
    rows: list = [Text(result.file, style="dim")]
    if result.status == "not_started":
        rows.append(Text.assemble(("Not started: ", "yellow"), (
            f"the file still raises NotImplementedError. Write the body, then check again "
            f"(`kata show {result.name}` prints the task).", "")))
    elif result.checks:
        rows.append(stage_bar(result))
        rows.append(Text(""))
        checks = Table.grid(padding=(0, 1))  # a grid keeps wrapped messages indented under their check
        checks.add_column(width=2, justify="right")
        checks.add_column(ratio=1)
        for c in result.checks:
            if c.skipped and not verbose:
                continue
            mark = ("✓", "green") if c.passed else ("✗", "red")
            if c.passed and c.message and c.kind != "core":
                mark = ("?", "yellow")  # accepted, with a note below
            checks.add_row(Text(mark[0], style=mark[1]), Text(c.name, style="" if c.passed else "bold"))
            if c.message and not c.passed:
                message = c.message.split(". Diagnosis: ")[0]  # the diagnosis gets its own line below
                checks.add_row(Text(""), Text(message, style="red"))
        rows.append(checks)
        skipped = sum(c.skipped for c in result.checks)
        if skipped and not verbose:
            rows.append(Text(f" · {skipped} more check(s) skipped until the ones above pass", style="dim"))
    if result.diagnosis:
        rows.append(Text.assemble(("\nDiagnosis: ", "bold yellow"), (result.diagnosis, "yellow")))
    notes = [c for c in result.followups() if c.passed]
    if notes:
        rows.append(Text("\nAccepted, with what an interviewer would ask next (--strict fails these):",
                         style="bold yellow"))
        for c in notes:
            label = "accepted variant" if c.kind == "variant" else "follow-up"
            rows.append(Text.assemble((f"? {label}: ", "bold yellow"), (c.message, "yellow")))
    if result.weights:
        rows.append(Text(f"\nAttention weights, batch 0, head 0, {result.weights['case']} "
                         "(darker = more weight; ✗ = weight where the expected one is 0):", style="bold"))
        rows.append(heatmap(result))
    if result.error and result.status != "not_started":
        rows.append(Text("\nYour code raised:" if result.checks else "\nYour file could not be loaded:", style="bold"))
        rows.append(Text(result.error.rstrip()))
    if result.output.strip():
        rows.append(Text("\nYour code printed:", style="bold"))
        rows.append(Text(result.output.rstrip(), style="dim"))
    if result.user_seconds is not None and result.status in ("pass", "fail"):
        ratio = (f" ({result.user_seconds / result.reference_seconds:.1f}× the reference)"
                 if result.reference_seconds else "")
        rows.append(Text(f"\nTime in your code {duration(result.user_seconds)}, reference {duration(result.reference_seconds)}"
                         f"{ratio}; whole check {result.seconds:.2f} s", style="dim"))
    title = Text.assemble((f" {result.name} ", "bold"), ("· ", "dim"), status_text(result.status),
                          (f" · {result.seconds:.2f} s ", "dim"))
    return Panel(Group(*rows), title=title, title_align="left",
                 border_style=STATUS_STYLE.get(result.status, "").replace("bold ", ""))


def summary_table(results) -> Table:
    table = Table(title="Summary", title_justify="left")
    for column in ("kata", "status", "checks", "stage reached", "seconds"):
        table.add_column(column, justify="right" if column in ("checks", "seconds") else "left")
    for r in results:
        passed = sum(c.passed for c in r.checks)
        table.add_row(r.name, status_text(r.status), f"{passed}/{len(r.checks)}" if r.checks else "–",
                      r.stage or "–", f"{r.seconds:.2f}")
    return table


def print_results(console: Console, results, *, verbose: bool = False) -> None:
    compact = len(results) > 3 and not verbose
    for r in results:
        if compact and r.status == "not_started":
            continue  # the summary lists them; a wall of identical panels helps nobody
        console.print(kata_panel(r, verbose=verbose))
    if len(results) > 1:
        console.print(summary_table(results))
