"""kata watch and kata drill: re-check on every save, from one long-lived process.

This process imports torch once; each check still runs the user's code in its own child
(engine.check_file), so a re-check costs only the checks themselves. A save is noticed through the
system's file events (inotify, FSEvents, ReadDirectoryChangesW, through watchfiles) and, always, by
comparing the files' stat every POLL_SECONDS: the fallback where file events do not arrive
(network drives, some containers, no watchfiles). On a terminal, r or Enter re-checks and q quits
(keys through termios on POSIX, msvcrt on Windows), and the report is drawn on one Screen that fits
the terminal whatever its size; elsewhere each report is printed after the last. Every check is
recorded as it happens, so a drill ended any way (q, Ctrl-C, killed) is scored on what it reached.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import sys
import threading
import time
from pathlib import Path

from rich import box
from rich.console import Console, Group
from rich.segment import Segment, Segments
from rich.table import Table
from rich.text import Text

from checker import catalogue
from checker.app import practice
from checker.state import workspace
from checker.lang import language, say, speak, tr
from checker.state.progress import NotRecorded, ProgressError
from checker.app.report import diagnosis, kata_panel, screen_middle, screen_top
from checker.errors import EXIT_INTERRUPTED, EXIT_NOT_PASSED, EXIT_OK, UsageError
from checker.state.progress import open_progress
from checker.app.terminal import Wrapped, print_json, status_text, warn
from checker.app.terminal import open_workspace
from checker.state.workspace import writable

POLL_SECONDS = 0.25  # the fallback's period, and how often the drill's countdown is redrawn
SETTLE_SECONDS = 0.03  # after a change is seen, wait this long for a save still being written to finish
KEY_SECONDS = 0.02  # on a terminal, how often keys and file events are looked at while waiting
RERUN_KEYS = ("r", "enter")


# ----------------------------------------------------------------------------- noticing saves and keys


def _signature(path: Path):
    try:
        st = path.stat()
    except OSError:
        return None
    return st.st_mtime_ns, st.st_size, st.st_ino


def _file_events(folders, woken: threading.Event, stop: threading.Event) -> bool:
    """Set woken on every change in folders, from a thread (watchfiles: native events on every system).

    False where watchfiles cannot be imported: the stat comparison alone then notices saves.
    """
    try:
        import watchfiles
    except ImportError:
        return False

    def run():
        try:
            for _ in watchfiles.watch(*folders, watch_filter=None, debounce=200, step=10, stop_event=stop,
                                      recursive=False, raise_interrupt=False):
                woken.set()
        except Exception:  # noqa: BLE001 - a folder vanished, the system refused: polling goes on
            pass

    threading.Thread(target=run, name="kata-file-events", daemon=True).start()
    return True


class Watcher:
    """Which of some files changed since last asked. Events only wake us up; the stat comparison decides."""

    def __init__(self, paths, *, events: bool = True):
        self.paths = list(paths)
        self.seen = {p: _signature(p) for p in self.paths}
        self.woken = threading.Event()
        self._stop = threading.Event()
        folders = sorted({str(p.parent) for p in self.paths if p.parent.is_dir()})
        self.events = events and _file_events(folders, self.woken, self._stop)

    def changed(self) -> list[Path]:
        self.woken.clear()
        if all(_signature(p) == self.seen[p] for p in self.paths):
            return []
        time.sleep(SETTLE_SECONDS)  # polling may have caught an editor between truncating and writing
        changed = []
        for path in self.paths:
            now = _signature(path)
            if now != self.seen[path]:
                self.seen[path] = now
                changed.append(path)
        return changed

    def close(self) -> None:
        self._stop.set()


def _key_source() -> str | None:
    """How single keys are read here: 'msvcrt' (Windows), 'termios' (a POSIX terminal), or None."""
    if not sys.stdin.isatty():
        return None
    try:
        import msvcrt  # noqa: F401
        return "msvcrt"
    except ImportError:
        pass
    try:
        import termios  # noqa: F401
        import tty  # noqa: F401
        return "termios"
    except ImportError:
        return None


# The keys that move through a report longer than the screen, as named by _key_names.
LINE_KEYS = {"j": 1, "down": 1, "k": -1, "up": -1}
PAGE_KEYS = {" ": 1, "pgdn": 1, "b": -1, "pgup": -1}

# What a terminal sends for the keys with no character: ANSI sequences on POSIX and in Windows Terminal,
# a 0x00 or 0xE0 prefix and a letter from msvcrt.getwch on Windows.
_ANSI = {"\x1b[A": "up", "\x1bOA": "up", "\x1b[B": "down", "\x1bOB": "down", "\x1b[5~": "pgup", "\x1b[6~": "pgdn"}
_MSVCRT = {"H": "up", "P": "down", "I": "pgup", "Q": "pgdn"}
_ESCAPES = r"\x1b\[[0-9;]*[~A-Za-z]|\x1bO[A-Za-z]|"
_KEY = {"termios": re.compile(_ESCAPES + ".", re.S), "msvcrt": re.compile(_ESCAPES + r"[\x00\xe0].?|.", re.S)}


def _key_names(raw: str, source: str) -> list[str]:
    """The keys in what the terminal sent: 'up', 'pgdn', 'enter', or the character itself, lower case.

    Every sequence is read whole, so that no part of one counts as a key (F2, ESC O Q, is not q).
    """
    names = []
    for token in _KEY[source].findall(raw):
        if token in _ANSI:
            names.append(_ANSI[token])
        elif source == "msvcrt" and token[0] in "\x00\xe0":
            names.append(_MSVCRT.get(token[1:], ""))
        elif len(token) == 1 and token != "\x1b":
            names.append("enter" if token in "\r\n" else token.lower())
    return [n for n in names if n]


class Keys:
    """Single key presses from the terminal (cbreak mode, restored on exit); none without a terminal."""

    def __enter__(self):
        self.source = _key_source()
        self.fd = sys.stdin.fileno() if self.source else None  # not None: keys can be pressed
        if self.source == "termios":
            import termios
            import tty

            self._saved = termios.tcgetattr(self.fd)
            tty.setcbreak(self.fd)
        return self

    def __exit__(self, *exc):
        if self.source == "termios":
            import termios

            try:
                termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)
            except termios.error:  # the window was closed: no terminal is left to restore
                pass

    def wait(self, watcher: Watcher, timeout: float) -> list[str]:
        """Sleep until a key, a file event or the timeout; the keys pressed, by name (_key_names)."""
        deadline = time.monotonic() + max(0.0, timeout)
        if self.source is None:
            watcher.woken.wait(max(0.0, timeout))
            return []
        while True:
            pressed = self._pressed(min(KEY_SECONDS, max(0.0, deadline - time.monotonic())))
            if pressed or watcher.woken.is_set() or time.monotonic() >= deadline:
                return _key_names(pressed, self.source)

    def _pressed(self, timeout: float) -> str:
        if self.source == "msvcrt":
            import msvcrt

            keys = ""
            while msvcrt.kbhit():
                keys += msvcrt.getwch()
            if not keys:
                time.sleep(timeout)
            return keys
        import select

        if select.select([self.fd], [], [], timeout)[0]:
            return os.read(self.fd, 64).decode(errors="ignore")
        return ""


def _ending_signals_here() -> list:
    """The signals that end a watch or drill as Ctrl-C does, of those this system has. SIGINT too: a process
    started in the background by a script inherits SIGINT ignored, and Python then leaves it ignored, so
    an explicit `kill -INT` (or an editor's stop button) would do nothing."""
    names = ("SIGINT", "SIGTERM", "SIGHUP", "SIGBREAK")  # SIGHUP: POSIX only; SIGBREAK (Ctrl-Break): Windows only
    return [getattr(signal, name) for name in names if hasattr(signal, name)]


@contextlib.contextmanager
def _ending_signals():
    """SIGTERM and SIGHUP end a watch or drill as Ctrl-C does: cleanly, with the report written."""
    def interrupt(signum, frame):
        raise KeyboardInterrupt

    saved = {s: signal.signal(s, interrupt) for s in _ending_signals_here()}
    try:
        yield
    finally:
        for s, handler in saved.items():
            signal.signal(s, handler)


class Checker:
    """Runs and records checks. Created once: importing the engine imports torch."""

    def __init__(self, progress, args, console: Console):
        from checker.sandbox import processes

        processes.prestart(keep=True)  # spawn, forkserver: the next child is always ready
        from checker import engine  # torch is imported here

        engine.warm_up()  # a long-lived process pays once what every forked check would pay again
        self.engine, self.progress, self.args, self.console = engine, progress, args, console
        self.notes: list[str] | None = None  # a list while a Screen is up: the screen shows them, stderr would not

    def run(self, kata, path: Path, **where):
        result = self.engine.check_file(kata, path, timeout=self.args.timeout, memory_gb=self.args.memory,
                                        strict=self.args.strict)
        if self.progress is not None:
            try:
                self.progress.record(result, **where)
            except NotRecorded as err:  # a read-only workspace: said once, then checks go on unrecorded
                self._note(str(err))
                self.progress = None
            except ProgressError as err:
                self._note(tr("{error}; this goes on without recording", error=err))
                self.progress = None
        return result

    def _note(self, message: str) -> None:
        if self.notes is None:
            warn(self.console, message)
        else:
            self.notes.append(message)


# ----------------------------------------------------------------------------- the screen


class Screen:
    """The whole terminal, drawn in place on the alternate screen (as less and top do): a top that stays,
    a middle that scrolls, a bottom that stays, and the keys on the last line(s).

    Whatever the terminal's size, the top (the kata's name, status and stage bar) and the bottom (the
    diagnosis) are on it; the middle gets the rows left over and scrolls with LINE_KEYS and PAGE_KEYS.
    The size is read at every drawing, so a resize redraws the whole screen at the new size.
    """

    def __init__(self, console: Console):
        self.console = console
        self.offset = 0  # the first line of the middle on screen
        self.page = 1  # how many lines of the middle the last drawing showed
        self.drawn = None  # (size, offset, state) of the last drawing

    def __enter__(self):
        self._alternate = self.console.screen(hide_cursor=True)
        self._alternate.__enter__()
        return self

    def __exit__(self, *exc):
        self._alternate.__exit__(*exc)

    def scroll(self, pressed: list[str]) -> None:
        for key in pressed:
            self.offset += LINE_KEYS.get(key, 0) + PAGE_KEYS.get(key, 0) * max(1, self.page - 1)

    def show(self, state, build) -> None:
        """Draw build() -> (top, middle, bottom, keys), unless state was drawn already at this size and offset.

        keys says what the keys do (None: no key can be pressed); when the middle does not fit, a line
        saying which lines are shown and how to scroll comes before it.
        """
        width, height = size = self.console.size
        if self.drawn == (size, self.offset, state):
            return
        top, middle, bottom, keys = build()
        options = self.console.options.update_width(width)

        def render(*renderables) -> list:
            return self.console.render_lines(Group(*renderables), options, pad=True) if renderables else []

        def foot(window=None) -> list:
            scrolling = [_scroll_keys(*window, len(body))] if window else []
            return render(*scrolling, Wrapped(keys, style="dim")) if keys is not None else []

        head, body, tail = render(*top), render(*middle), render(*bottom)
        room = height - len(head) - len(tail) - len(foot())
        if len(body) <= room:
            self.offset, keys_lines = 0, foot()
        else:
            room = max(0, height - len(head) - len(tail) - len(foot((1, 1))))
            self.offset = max(0, min(self.offset, len(body) - room))
            keys_lines = foot((self.offset + 1, self.offset + room))
        self.page = room
        lines = (head + body[self.offset:self.offset + room] + tail)[:max(0, height - len(keys_lines))]
        lines = Segment.set_shape(lines + [[]] * (height - len(lines) - len(keys_lines)) + keys_lines, width, height)
        if self.console.is_alt_screen:
            self.console.update_screen_lines(lines)
        else:  # a console with no alternate screen (legacy Windows): clear it, then draw
            self.console.clear()
            self.console.print(Segments([s for line in lines for s in (*line, Segment.line())][:-1]), end="")
        self.drawn = (size, self.offset, state)


def _scroll_keys(first: int, last: int, total: int) -> Text:
    return Text(tr("lines {first}–{last} of {total}: ↑↓ j k a line, PgUp PgDn space b a page",
                  first=first, last=last, total=total), style="bold")


def _where(path: Path, folder: Path) -> str:
    try:
        return path.relative_to(folder).as_posix()
    except ValueError:
        return str(path)


# ----------------------------------------------------------------------------- kata watch


def cmd_watch(args, console: Console) -> int:
    lang = language(args.lang)
    speak(lang)  # the whole verdict, and the screens drawing it, in the user's language
    ws = open_workspace(args, console)
    try:
        progress = open_progress(ws)
    except ProgressError as err:
        warn(console, tr("{error}; watching without recording", error=err))
        progress = None
    katas = [catalogue.find(args.name)] if args.name else list(catalogue.all_katas())
    files = {workspace.kata_file(ws, k): k for k in katas if args.name or workspace.kata_file(ws, k).exists()}
    if not files:
        raise UsageError(tr("no kata files in {folder}; `kata init {folder}` puts the stubs back", folder=ws))
    summary = progress.summary() if progress else {}
    path = next((p for p, k in files.items() if summary.get(k.id, {}).get("status") != "pass"), next(iter(files)))
    console.print(Text(say(lang, "ready"), style="dim"))
    checker = Checker(progress, args, console)
    watcher = Watcher(files, events=not args.poll)
    watch = _Watch(console, lang, ws, files, progress, args.name)
    try:
        with Keys() as keys, _ending_signals(), watch.screen or contextlib.nullcontext():
            watch.keys = keys.fd is not None
            if watch.screen:
                checker.notes = watch.notes
            changed = [path]
            while True:
                for p in changed:
                    watch.checking = files[p]
                    watch.show()
                    watch.result, watch.checking = checker.run(files[p], p), None
                watch.checked()
                changed = []
                while not changed:
                    watch.show()
                    pressed = keys.wait(watcher, POLL_SECONDS)
                    if "q" in pressed:
                        return EXIT_OK
                    if watch.screen:
                        watch.screen.scroll(pressed)
                    changed = watcher.changed()
                    if not changed and any(k in pressed for k in RERUN_KEYS):
                        changed = [Path(watch.result.file)]
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        watcher.close()
        if watch.screen and watch.result:  # the screen is gone with the alternate screen: the last report stays
            console.print(kata_panel(watch.result))


class _Watch:
    """What kata watch shows: on a terminal, one screen that fits (Screen); elsewhere, each report in turn."""

    def __init__(self, console: Console, lang: str, ws: Path, files: dict, progress, named):
        self.console, self.lang, self.ws, self.files = console, lang, ws, files
        self.progress, self.named = progress, named
        self.screen = Screen(console) if console.is_terminal else None
        self.result = self.checking = self.following = None
        self.at, self.keys, self.count = "", False, 0  # count: the results shown so far
        self.notes: list[str] = []

    def checked(self) -> None:
        """A new result: the time, the next kata to suggest, and off a terminal the report printed."""
        result, self.at, self.following = self.result, time.strftime("%H:%M:%S"), None
        self.count += 1
        if result.status == "pass" and not self.named and self.progress is not None:
            following = next((s for s in practice.suggestions(self.progress, self.lang)
                              if s["kind"] != "review" and s["name"] != result.name), None)
            if following:
                kata = catalogue.find(following["name"])
                self.following = say(self.lang, "watch.next", kata=kata.id, file=workspace.kata_file(self.ws, kata))
        if self.screen is None:
            self.console.print(Text.assemble(("kata watch", "bold"), (f" · {self.at} · ", "dim"),
                                             (say(self.lang, "watch.watching", count=len(self.files),
                                                  folder=self.ws), "dim")))
            self.console.print(kata_panel(result))
            if self.following:
                self.console.print(Text(self.following, style="green"))
            if self.keys:
                self.console.print(Text(say(self.lang, "watch.keys"), style="dim"))
        else:
            self.screen.offset = 0  # a new report is read from its top

    def show(self) -> None:
        if self.screen is not None:
            self.screen.show((self.count, self.checking, len(self.notes)), self.view)

    def view(self):
        doing = (say(self.lang, "check.progress", kata=self.checking.id) if self.checking
                 else say(self.lang, "watch.watching", count=len(self.files), folder=self.ws))
        top = [Wrapped(Text.assemble(("kata watch", "bold"), (f" · {self.at} · " if self.at else " · ", "dim"),
                                     (doing, "dim")))]
        middle, bottom = [], []
        if self.result is not None:
            top += screen_top(self.result, _where(Path(self.result.file), self.ws))
            top.append(Text(""))
            middle, bottom = screen_middle(self.result), diagnosis(self.result)
            if self.following:
                bottom.append(Wrapped(self.following, style="green"))
        bottom += [Wrapped(note, style="yellow") for note in self.notes]
        return top, middle, bottom, say(self.lang, "watch.keys") if self.keys else None


# ----------------------------------------------------------------------------- kata drill


def cmd_drill(args, console: Console) -> int:
    lang = language(args.lang)
    speak(lang)
    if args.list:
        return practice.print_presets(console, lang, args.json)
    preset, katas, minutes = practice.choose_drill(args.names, args.minutes)
    ws = open_workspace(args, console)
    writable(ws, "drill")  # its folder, its stubs and its history are written there
    progress = open_progress(ws)  # a drill without history would be pointless: its report reads it
    out = Console(stderr=True, no_color=console.no_color, highlight=False) if args.json else console
    out.print(Text(say(lang, "ready"), style="dim"))
    checker = Checker(progress, args, out)
    folder = practice.make_drill_folder(ws, katas)
    with _ending_signals():  # from the moment the drill is recorded, SIGTERM ends it with a report
        drill = progress.start_drill(preset, [k.id for k in katas], folder, minutes, args.allow_hints, os.getpid())
        reason = "interrupted"
        try:
            files = {workspace.kata_file(folder, k): k for k in katas}
            out.print(Text(say(lang, "drill.files", id=drill, minutes=minutes), style="bold"))
            for path in files:
                out.print(Text(f"  {path}"))
            reason = _Drill(checker, drill, files, minutes, preset, lang, out, folder).loop(args.poll)
        except KeyboardInterrupt:
            reason = "interrupted"
        finally:  # every check so far is recorded: the score counts what was reached, however the drill ends
            progress.end_drill(drill, reason, practice.drill_report(progress, drill)["score"])
    if args.quiz > 0 and reason != "interrupted":  # the oral round after the code, scored apart
        from checker.quiz.ask import drill_quiz

        drill_quiz(out, progress, drill, [k.id for k in katas], args.quiz, lang)
    report = practice.drill_report(progress, drill)
    if args.json:
        print_json(report)
    else:
        practice.print_drill_report(console, report, lang)
    if reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_OK if report["green"] == len(katas) else EXIT_NOT_PASSED


def _content(path: Path) -> bytes | None:
    try:
        return workspace.read_source(path)
    except (OSError, workspace.WorkspaceError):
        return None


class _Drill:
    """The running drill: its clock, the last result of each kata, and the dashboard."""

    def __init__(self, checker: Checker, drill: int, files: dict, minutes: float, preset: str, lang: str,
                 out: Console, folder: Path):
        self.checker, self.drill, self.files, self.minutes, self.preset, self.lang, self.out, self.folder = (
            checker, drill, files, minutes, preset, lang, out, folder)
        self.results = {k.id: None for k in files.values()}
        self.attempts = {k.id: 0 for k in files.values()}
        self.green: dict[str, float] = {}
        self.last = self.checking = None
        self.note = ""  # what r did
        self.notes: list[str] = []  # what the checker could not do (record, in a read-only workspace)
        self.checked = {path: _content(path) for path in files}  # what each file held at its last check (or the stub)
        self.start = time.monotonic()
        self.screen = Screen(out) if out.is_terminal else None
        self.keys = False

    def loop(self, poll_only: bool) -> str:
        """Re-check every save until time is up ('time'), all is green ('done') or q ('quit')."""
        watcher = Watcher(self.files, events=not poll_only)
        try:
            with Keys() as keys, _ending_signals(), self.screen or contextlib.nullcontext():
                self.keys = keys.fd is not None
                if self.screen:
                    self.checker.notes = self.notes
                while True:
                    left = self.start + self.minutes * 60 - time.monotonic()
                    if left <= 0:
                        return "time"
                    self.show(left)
                    pressed = keys.wait(watcher, min(POLL_SECONDS, left))
                    changed = watcher.changed()
                    if "q" in pressed:
                        for path in changed:  # a save made just before q counts
                            self.check(path)
                        return "quit"
                    if self.screen:
                        self.screen.scroll(pressed)
                    if not changed and any(k in pressed for k in RERUN_KEYS):
                        changed = [p for p in self.files if _content(p) != self.checked[p]]
                        names = ", ".join(self.files[p].id for p in changed)
                        self.note = (tr("r: re-checking only what changed since its last check: {files}", files=names)
                                     if changed else tr("r: no file changed since its last check, so nothing was "
                                                       "re-checked"))
                    elif changed:
                        self.note = ""
                    for path in changed:
                        self.check(path)
                    if all(r is not None and r.status == "pass" for r in self.results.values()):
                        return "done"
        finally:
            watcher.close()

    def check(self, path: Path) -> None:
        kata = self.files[path]
        elapsed = time.monotonic() - self.start
        self.checking = kata
        self.show(self.start + self.minutes * 60 - time.monotonic())
        self.checked[path] = _content(path)
        result = self.checker.run(kata, path, drill=self.drill, elapsed=round(elapsed, 2))
        self.results[kata.id], self.last, self.checking = result, result, None
        self.attempts[kata.id] += 1
        if result.status == "pass":
            self.green.setdefault(kata.id, elapsed)
        if self.screen is None:  # no dashboard: one line per check
            self.out.print(Text.assemble((f"[{practice.clock(elapsed)}] ", "dim"), (kata.id, "bold"), " ",
                                         status_text(result.status), " · ", tr("stage {stage}", stage=(
                                             say(self.lang, f"stage.{result.stage}") if result.stage else "–"))))
        else:
            self.screen.offset = 0

    def show(self, left: float) -> None:
        if self.screen is not None:
            clock = practice.clock(max(0.0, left))
            state = (clock, sum(self.attempts.values()), self.checking, self.note, len(self.notes))
            self.screen.show(state, lambda: self.view(left))

    def view(self, left: float):
        countdown = say(self.lang, "drill.left", time=practice.clock(max(0.0, left)))
        head = Text.assemble(("kata drill", "bold"), (" · " + tr("{preset} · {minutes:g} min", preset=self.preset,
                                                                 minutes=self.minutes) + " · ", "dim"),
                             (countdown, "bold red" if left < 60 else "bold cyan"))
        if self.checking:
            head.append(" · " + say(self.lang, "check.progress", kata=self.checking.id), style="dim")
        table = Table(box=box.SIMPLE_HEAD, padding=(0, 1), pad_edge=False, show_edge=False)
        for column in ("kata", "status", "stage reached", "attempts", "first green"):
            table.add_column(tr(column), justify="right" if column == "attempts" else "left", no_wrap=column == "kata")
        for kata in self.files.values():
            r = self.results[kata.id]
            table.add_row(Text(kata.id, style="bold"),
                          status_text(r.status if r else "not_started"),
                          say(self.lang, f"stage.{r.stage}") if r and r.stage else "–", str(self.attempts[kata.id]),
                          practice.clock(self.green.get(kata.id)))
        top = [Wrapped(head), Wrapped(tr("Your files: {folder}", folder=self.folder), style="dim"), table]
        middle, bottom = [], []
        if self.last is not None:
            top += [Text(""), *screen_top(self.last, _where(Path(self.last.file), self.folder))]
            middle, bottom = screen_middle(self.last), diagnosis(self.last)
        if self.note:
            bottom.append(Wrapped(self.note, style="cyan"))
        bottom += [Wrapped(note, style="yellow") for note in self.notes]
        keys = tr("saving re-checks · r re-check the changed files · q end the drill") if self.keys else None
        return top, middle, bottom, keys
