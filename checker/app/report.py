"""Renders check results with rich. Results are data (checker/results.py); this only draws them.

User-provided text (messages quoting their code, tracebacks, printed output) is always wrapped
in Text objects, never parsed as markup, so `[mask]` in a message stays `[mask]`.
"""

from __future__ import annotations

from dataclasses import asdict, replace
from pathlib import Path

from rich.console import Console, Group
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from checker.lang import said, say, spoken, tr
from checker.app.terminal import NO_BREAK, STATUS_STYLE, Wrapped, duration, marks, status_text
from checker.results import STAGES  # noqa: F401 - the screens import it from here too


def drawn(result):
    """The result in the language spoken now: checks run once, their sentences stay messages (template and
    values) until here, where every view of a result begins. Plain text (the user's traceback) stays as it is."""
    checks = [replace(c, name=said(c.name), message=said(c.message), diagnosis=said(c.diagnosis)) for c in result.checks]
    weights = result.weights and {**result.weights, "case": said(result.weights["case"])}
    return replace(result, checks=checks, diagnosis=said(result.diagnosis), error=said(result.error), weights=weights)


def stage_bar(result) -> Text:
    """structure ▸ shapes ▸ masking ▸ numerics ▸ hygiene, each coloured by how it went."""
    bar = Text()
    mark_of = marks()
    present = [s for s in STAGES if any(c.stage == s for c in result.checks)]
    for i, stage in enumerate(present):
        checks = [c for c in result.checks if c.stage == stage]
        if any(not c.passed and not c.skipped for c in checks):
            style, mark = "red", mark_of["fail"]
        elif all(c.passed for c in checks):
            style, mark = "green", mark_of["pass"]
        else:  # some skipped (until a failure elsewhere is fixed), the rest passed
            style, mark = "dim", mark_of["skipped"]
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

    grid.add_row(Text(tr("your weights"), style="bold"), Text(tr("expected"), style="bold"))
    grid.add_row(draw(maps["user"], maps["expected"]), draw(maps["expected"], None))
    return grid


def sentence(check) -> str:
    """A check's message with its diagnosis, as one sentence in the language spoken: what the problems lines and
    a follow-up's note say. The panel and the screens show the diagnosis apart, --json in a field of its own."""
    if not check.diagnosis:
        return check.message
    return tr("{message}. Diagnosis: {diagnosis}", message=check.message, diagnosis=check.diagnosis)


def where(path: str, line: int) -> str:
    """'→ line 18: out = x + sublayer(h)': the line of the user's file a failed check points at."""
    from checker.state.workspace import WorkspaceError, read_source

    try:
        lines = read_source(Path(path)).decode("utf-8", errors="replace").splitlines()
        code = _without_comment(lines[line - 1]).strip() if 0 < line <= len(lines) else ""
    except (OSError, WorkspaceError):
        code = ""
    return tr("→ line {line}: {code}", line=line, code=code) if code else tr("→ line {line}", line=line)


def _without_comment(line: str) -> str:
    """A line of code without its trailing comment (`scores = ...  # hidden keys: -inf`), which only wrapped the
    line quoted in a report; a line that is all comment, or that Python cannot read alone, stays as it is."""
    import io
    import tokenize

    try:
        for token in tokenize.generate_tokens(io.StringIO(line).readline):
            if token.type == tokenize.COMMENT:
                code = line[:token.start[1]].rstrip()
                return code if code.strip() else line
    except (tokenize.TokenError, SyntaxError):  # a line inside an open bracket: its comment came before the error
        pass
    return line


def _not_started(result) -> Wrapped:
    return Wrapped(Text.assemble((tr("Not started: "), "yellow"), (
        tr("the file still raises NotImplementedError. Write the body, then check again (`kata show {kata}` "
          "prints the task).", kata=result.name), "")))


def _checks(result, *, verbose: bool, folded: bool, unsaid: int = 0) -> list:
    """Each check with its mark, a failure with its message and the line it points at; folded (the screens):
    the passed ones as one line; unsaid: the last failures counted on one line (a report kept to MOST_LINES)."""
    rows: list = []
    mark_of = marks()
    shown = [c for c in result.checks if verbose or not c.skipped]
    passed = sum(c.passed for c in shown)
    failures = [c for c in shown if not c.passed]
    hidden = {id(c) for c in failures[len(failures) - unsaid:]} if unsaid else set()
    grid = Table.grid(padding=(0, 1))  # a grid keeps wrapped messages indented under their check
    grid.add_column(width=max(2, len(mark_of["fail"])), justify="right")
    grid.add_column(ratio=1)
    if folded and passed:
        grid.add_row(Text(mark_of["pass"], style="green"), Wrapped(tr("{count} check(s) passed", count=passed),
                                                                   style="green"))
    for c in shown:
        if (folded and c.passed) or id(c) in hidden:
            continue
        mark = (mark_of["pass"], "green") if c.passed else (mark_of["fail"], "red")
        if c.passed and c.message and c.kind != "core":
            mark = ("?", "yellow")  # accepted, with a note below
        grid.add_row(Text(mark[0], style=mark[1]), Wrapped(c.name, style="" if c.passed else "bold"))
        if c.message and not c.passed:
            grid.add_row(Text(""), Wrapped(c.message, style="red"))  # its diagnosis has a line of its own
            if c.line:
                grid.add_row(Text(""), Wrapped(where(result.file, c.line), style="cyan"))
    if hidden:
        grid.add_row(Text(mark_of["fail"], style="red"), Wrapped(
            tr("{count} more check(s) fail too (--verbose shows them)", count=len(hidden)), style="red"))
    if grid.row_count:
        rows.append(grid)
    skipped = len(result.checks) - len(shown)
    if skipped:
        rows.append(Wrapped(tr(" · {count} more check(s) skipped until the ones above pass", count=skipped),
                            style="dim"))
    return rows


def diagnosis(result) -> list:
    """The mistake the run names, on a line of its own."""
    result = drawn(result)
    if not result.diagnosis:
        return []
    return [Wrapped(Text.assemble((tr("Diagnosis: "), "bold yellow"), (result.diagnosis, "yellow")))]


def _after(result, unsaid: int = 0) -> list:
    """What follows the checks: accepted variants and follow-up questions, the attention weights, what the
    user's code raised and printed, and the time it took."""
    rows: list = []
    notes = [c for c in result.followups() if c.passed]
    if notes:
        rows += [Text(""), Wrapped(tr("Accepted, with what an interviewer would ask next (--strict fails these):"),
                                   style="bold yellow")]
        for c in notes:
            label = tr("? accepted variant: ") if c.kind == "variant" else tr("? follow-up: ")
            rows.append(Wrapped(Text.assemble((label, "bold yellow"), (sentence(c), "yellow"))))
    if result.weights:
        rows += [Text(""), Wrapped(tr("Attention weights, batch 0, head 0, {case} (darker = more weight; {leak} = weight "
                                     "where the expected one is 0):", case=_case_named(result, unsaid),
                                     leak=marks()["fail"]), style="bold"), heatmap(result)]
    if result.error and result.status != "not_started":
        rows += [Text(""), Text(tr("Your code raised:") if result.checks else tr("Your file could not be loaded:"),
                                style="bold"), Wrapped(_traceback(result.error, result.file))]
    if result.output.strip():
        rows += [Text(""), Text(tr("Your code printed:"), style="bold"), Wrapped(result.output.rstrip(), style="dim")]
    if result.user_seconds is not None and result.status in ("pass", "fail"):
        ratio = (tr(" ({ratio:.1f}×)", ratio=result.user_seconds / result.reference_seconds)
                 if result.reference_seconds else "")
        timing = tr("Time: your code {user}, the reference {reference}{ratio}; whole check {seconds:.2f} s",
                   user=duration(result.user_seconds), reference=duration(result.reference_seconds), ratio=ratio,
                   seconds=result.seconds)  # one line at 80 columns, in both languages
        rows += [Text(""), Wrapped(timing, style="dim")]
    return rows


def _case_named(result, unsaid: int = 0) -> str:
    """The heat map's case: by its number alone when a failure shown above gives its settings already."""
    import re

    label = result.weights["case"]
    number = re.search(r"\d+", label)
    failures = [c for c in result.checks if not c.passed and not c.skipped]
    if number and any(label in c.message for c in failures[:len(failures) - unsaid]):
        return tr("case {id}", id=int(number[0]))
    return label


def _traceback(error: str, path: str) -> str:
    """The traceback as a report shows it (--json keeps it whole): the file named by its name (the panel's first
    line gives the path); without Python's ^^^^ markers, which wrap into lines of their own once the code line
    wraps, nor the comments of the lines it quotes; a frame repeating the one above it (a list comprehension on
    its line) once; and of a deep one, the outermost frame, where the user's code begins, and the two innermost,
    where it raised."""
    import re

    text = error.rstrip().replace(f'File "{path}"', f'File "{Path(path).name}"')
    head, frames, tail = [], [], []  # tail: the error itself (and what Python says below it)
    for line in text.splitlines():
        if re.fullmatch(r"\s*[\^~]+\s*", line):
            continue
        if line.startswith('  File "') and not tail:
            frames.append([line])
        elif line.startswith("    ") and frames and not tail:
            frames[-1].append(_without_comment(line))
        else:
            (tail if frames else head).append(line)
    same = [re.sub(r", in .*", "", f[0]) + "\n" + "\n".join(f[1:]) for f in frames]
    frames = [f for i, f in enumerate(frames) if i == 0 or same[i] != same[i - 1]]
    if len(frames) > 4:
        frames = [frames[0], [tr("  … {count} frame(s) between them left out", count=len(frames) - 3)], *frames[-2:]]
    return "\n".join([*head, *(line for f in frames for line in f), *tail])


MOST_LINES = 40  # issue 26: the report of one mistake, at the width it is drawn at


def kata_panel(result, *, verbose: bool = False) -> _Fitted:
    """The terminal's report of one kata (and the notebook's, exported as HTML), kept to MOST_LINES."""
    return _Fitted(drawn(result), verbose)


class _Fitted:
    """A failing report, drawn at the console's width, that runs over MOST_LINES says its last failures in one
    line, as few as it takes: they follow from the mistake the first ones show (and the diagnosis names); the
    stage bar still marks their stages, --verbose and --json say every one."""

    def __init__(self, result, verbose: bool):
        self.result, self.verbose = result, verbose

    def __rich_console__(self, console, options):
        panel = _panel(self.result, verbose=self.verbose)
        if self.verbose or self.result.status != "fail":
            yield panel
            return
        failures = sum(not c.passed and not c.skipped for c in self.result.checks)
        measure = options.update(height=None)
        for unsaid in range(1, failures):  # the first failure is always said
            if len(console.render_lines(panel, measure, pad=False)) <= MOST_LINES:
                break
            panel = _panel(self.result, verbose=False, unsaid=unsaid)
        yield panel


def _panel(result, *, verbose: bool, unsaid: int = 0) -> Panel:
    rows: list = [Text(result.file, style="dim")]
    if result.status == "not_started":
        rows.append(_not_started(result))
    elif result.checks:
        # a failing run folds its passed checks into one line (the stage bar shows where they are): the
        # failures are what is read; --verbose lists every check
        folded = result.status != "pass" and not verbose
        rows += [stage_bar(result), Text(""), *_checks(result, verbose=verbose, folded=folded, unsaid=unsaid)]
    if result.diagnosis:
        rows += [Text(""), *diagnosis(result)]
    rows += _after(result, unsaid)
    title = Text.assemble((f" {result.name} ", "bold"), ("· ", "dim"), status_text(result.status),
                          (f" · {result.seconds:.2f} s ", "dim"))
    return Panel(Group(*rows), title=title, title_align="left",
                 border_style=STATUS_STYLE.get(result.status, "").replace("bold ", ""))


def screen_top(result, where: str) -> list:
    """The watch and drill screens' lines that never scroll away: the kata, its status and its stage bar."""
    result = drawn(result)
    title = Text.assemble((result.name, "bold"), (" · ", "dim"), status_text(result.status),
                          (f" · {result.seconds:.2f} s · {where}", "dim"))
    if not result.checks:
        return [Wrapped(title)]
    bar = stage_bar(result)
    mark_of = marks()
    for mark in (mark_of["pass"], mark_of["fail"], mark_of["skipped"]):  # each mark stays with its stage:
        bar.plain = bar.plain.replace(mark + " ", mark + NO_BREAK)  # the bar breaks only after the next mark
    bar.plain = bar.plain.replace(" " + mark_of["next"], NO_BREAK + mark_of["next"])
    return [Wrapped(title), Wrapped(bar)]


def screen_middle(result) -> list:
    """The screens' scrolling part: the report without its diagnosis (pinned apart), passed checks folded."""
    result = drawn(result)
    rows = [_not_started(result)] if result.status == "not_started" else []
    return rows + _checks(result, verbose=False, folded=True) + _after(result)


def as_json(result) -> dict:
    """--json: every field of the result, drawn in the language spoken, each its own field (a check's message,
    diagnosis, line); checker.results.from_json reads it back. followups lists the notes apart, for readers."""
    result = drawn(result)
    document = asdict(result)
    document["followups"] = [{"name": c.name, "kind": c.kind, "message": c.message, "diagnosis": c.diagnosis}
                             for c in result.followups()]
    return document


def problems(results) -> list[str]:
    """One `path:line:col: error|warning: stage: message` line per problem, for editors' problem matchers
    (VS Code, Vim's quickfix). A failing check is an error, an accepted variant or a follow-up a warning; the same
    message twice is one line. A problem is placed where its check places it, else at a line its message names,
    else where the rest of the report does (one mistake: its diagnosis's line, another failure's, the line the
    code raised on); only a problem nothing places points at the file's first line."""
    import re

    out, seen = [], set()
    for raw in results:
        r = drawn(raw)
        if r.error and not r.checks and r.status != "not_started":  # the file could not even be loaded
            lines = re.findall(r"line (\d+)", r.error)
            out.append(f"{r.file}:{lines[-1] if lines else 1}:1: error: structure: {r.error.strip().splitlines()[-1]}")
        placed = _placed(r)
        for c, own in zip(r.checks, placed["checks"]):
            if c.skipped or (c.passed and (c.kind == "core" or not c.message)):
                continue
            message = " ".join(sentence(c).split())
            line = own or (placed["report"] if not c.passed else None)
            if (r.file, line, message) in seen:  # float64 and float32 failing alike: one problem, one line
                continue
            seen.add((r.file, line, message))
            column = c.column or (_first_column(r.file, line) if line else 1)
            out.append(f"{r.file}:{line or 1}:{column}: {'warning' if c.passed else 'error'}: {c.stage}: {message}")
    return out


def _placed(result) -> dict:
    """The line of the user's file each check places its problem on, and the line the report as a whole points at:
    the diagnosis's, a failure's, or the deepest of the traceback."""
    import re

    failed = [c.line for c in result.checks if c.line and not c.passed and not c.skipped]
    raised = re.findall(r"line (\d+)", result.error or "")  # Python's traceback, never a message of kata's
    report_line = result.line or (failed[0] if failed else None) or (int(raised[-1]) if raised else None)
    return {"checks": [c.line for c in result.checks], "report": report_line}


def _first_column(path: str, line: int) -> int:
    """Where the code of a line of the user's file begins (1 where the file cannot be read)."""
    from checker.state.workspace import WorkspaceError, read_source

    try:
        lines = read_source(Path(path)).decode("utf-8", errors="replace").splitlines()
    except (OSError, WorkspaceError):
        return 1
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    return len(text) - len(text.lstrip()) + 1 if text.strip() else 1


def summary_table(results) -> Table:
    table = Table(title=tr("Summary"), title_justify="left")
    for column in ("kata", "status", "checks", "stage reached", "seconds"):
        table.add_column(tr(column), justify="right" if column in ("checks", "seconds") else "left")
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
