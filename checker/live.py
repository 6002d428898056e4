"""kata watch and kata drill: re-check on every save, from one long-lived process.

This process imports torch once; each check still runs the user's code in its own child
(engine.check_file), so a re-check costs only the checks themselves. A save is noticed through the
system's file events (inotify, FSEvents, ReadDirectoryChangesW, through watchfiles) and, always, by
comparing the files' stat every POLL_SECONDS: the fallback where file events do not arrive
(network drives, some containers, no watchfiles). On a terminal, r or Enter re-checks and q quits
(keys through termios on POSIX, msvcrt on Windows). Every check is recorded as it happens.
"""

from __future__ import annotations

import contextlib
import os
import signal
import sys
import threading
import time
from pathlib import Path

from rich import box
from rich.console import Console, Group
from rich.live import Live
from rich.table import Table
from rich.text import Text

from checker import catalogue, practice, workspace
from checker.lang import language, say, speak, spoken
from checker.progress import NotRecorded, ProgressError
from checker.report import STATUS_LABEL, kata_panel, status_text
from checker.terminal import (EXIT_INTERRUPTED, EXIT_NOT_PASSED, EXIT_OK, UsageError, open_progress,
                              open_workspace, print_json, warn, writable)

POLL_SECONDS = 0.25  # the fallback's period, and how often the drill's countdown is redrawn
SETTLE_SECONDS = 0.03  # after a change is seen, wait this long for a save still being written to finish
KEY_SECONDS = 0.02  # on a terminal, how often keys and file events are looked at while waiting
RERUN_KEYS = ("r", "\n", "\r")


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

            termios.tcsetattr(self.fd, termios.TCSADRAIN, self._saved)

    def wait(self, watcher: Watcher, timeout: float) -> str:
        """Sleep until a key, a file event or the timeout; the keys pressed, if any."""
        deadline = time.monotonic() + max(0.0, timeout)
        if self.source is None:
            watcher.woken.wait(max(0.0, timeout))
            return ""
        while True:
            pressed = self._pressed(min(KEY_SECONDS, max(0.0, deadline - time.monotonic())))
            if pressed or watcher.woken.is_set() or time.monotonic() >= deadline:
                return pressed.lower()

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
    """The signals that end a watch or drill as Ctrl-C does, of those this system has."""
    names = ("SIGTERM", "SIGHUP", "SIGBREAK")  # SIGHUP: POSIX only; SIGBREAK (Ctrl-Break): Windows only
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
        from checker import processes

        processes.prestart(keep=True)  # spawn, forkserver: the next child is always ready
        from checker import engine  # torch is imported here

        engine.warm_up()  # a long-lived process pays once what every forked check would pay again
        self.engine, self.progress, self.args, self.console = engine, progress, args, console

    def run(self, kata, path: Path, **where):
        result = self.engine.check_file(kata, path, timeout=self.args.timeout, memory_gb=self.args.memory,
                                        strict=self.args.strict, lang=spoken())
        if self.progress is not None:
            try:
                self.progress.record(result, **where)
            except NotRecorded as err:  # a read-only workspace: said once, then checks go on unrecorded
                warn(self.console, str(err))
                self.progress = None
            except ProgressError as err:
                warn(self.console, f"{err}; this watch goes on without recording")
                self.progress = None
        return result


# ----------------------------------------------------------------------------- kata watch


def cmd_watch(args, console: Console) -> int:
    lang = language(args.lang)
    speak(lang)  # the whole verdict, and the screens drawing it, in the user's language
    ws = open_workspace(args, console)
    try:
        progress = open_progress(ws)
    except ProgressError as err:
        warn(console, f"{err}; watching without recording")
        progress = None
    katas = [catalogue.find(args.name)] if args.name else list(catalogue.all_katas())
    files = {workspace.kata_file(ws, k): k for k in katas if args.name or workspace.kata_file(ws, k).exists()}
    if not files:
        raise UsageError(f"no kata files in {ws}; `kata init {ws}` puts the stubs back")
    summary = progress.summary() if progress else {}
    path = next((p for p, k in files.items() if summary.get(k.id, {}).get("status") != "pass"), next(iter(files)))
    console.print(Text(say(lang, "ready"), style="dim"))
    checker = Checker(progress, args, console)
    watcher = Watcher(files, events=not args.poll)
    try:
        with Keys() as keys, _ending_signals():
            changed = [path]
            while True:
                if console.is_terminal:
                    console.print(Text(f"checking {files[changed[-1]].id} ...", style="dim"))
                results = [checker.run(files[p], p) for p in changed]
                _show_watch(console, results[-1], lang, ws, len(files), progress, keys.fd is not None, args.name)
                changed = []
                while not changed:
                    pressed = keys.wait(watcher, POLL_SECONDS)
                    if "q" in pressed:
                        return EXIT_OK
                    changed = watcher.changed()
                    if not changed and any(k in pressed for k in RERUN_KEYS):
                        changed = [Path(results[-1].file)]
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    finally:
        watcher.close()


def _show_watch(console: Console, result, lang: str, ws: Path, count: int, progress, keys: bool, named) -> None:
    console.clear()  # only on a terminal; elsewhere the reports follow each other
    console.print(Text.assemble(("kata watch", "bold"), (f" · {time.strftime('%H:%M:%S')} · ", "dim"),
                                (say(lang, "watch.watching", count=count, folder=ws), "dim")))
    console.print(kata_panel(result))
    if result.status == "pass" and not named and progress is not None:
        following = next((s for s in practice.suggestions(progress, lang)
                          if s["kind"] != "review" and s["name"] != result.name), None)
        if following:
            kata = catalogue.find(following["name"])
            where = workspace.kata_file(ws, kata)
            console.print(Text(say(lang, "watch.next", kata=kata.id, file=where), style="green"))
    if keys:
        console.print(Text(say(lang, "watch.keys"), style="dim"))


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
            reason = _Drill(checker, drill, files, minutes, preset, lang, out).loop(args.poll)
        except KeyboardInterrupt:
            reason = "interrupted"
        finally:
            progress.end_drill(drill, reason, practice.drill_report(progress, drill)["score"])
    report = practice.drill_report(progress, drill)
    if args.json:
        print_json(report)
    else:
        practice.print_drill_report(console, report, lang)
    if reason == "interrupted":
        return EXIT_INTERRUPTED
    return EXIT_OK if report["green"] == len(katas) else EXIT_NOT_PASSED


class _Drill:
    """The running drill: its clock, the last result of each kata, and the dashboard."""

    def __init__(self, checker: Checker, drill: int, files: dict, minutes: float, preset: str, lang: str, out: Console):
        self.checker, self.drill, self.files, self.minutes, self.preset, self.lang, self.out = (
            checker, drill, files, minutes, preset, lang, out)
        self.results = {k.id: None for k in files.values()}
        self.attempts = {k.id: 0 for k in files.values()}
        self.green: dict[str, float] = {}
        self.last = None
        self.start = time.monotonic()

    def loop(self, poll_only: bool) -> str:
        """Re-check every save until time is up ('time'), all is green ('done') or q ('quit')."""
        watcher = Watcher(self.files, events=not poll_only)
        live = Live(console=self.out, auto_refresh=False, transient=True) if self.out.is_terminal else None
        try:
            with Keys() as keys, _ending_signals(), live or contextlib.nullcontext():
                while True:
                    left = self.start + self.minutes * 60 - time.monotonic()
                    if left <= 0:
                        return "time"
                    if live:
                        live.update(self.dashboard(left, keys.fd is not None), refresh=True)
                    pressed = keys.wait(watcher, min(POLL_SECONDS, left))
                    if "q" in pressed:
                        return "quit"
                    changed = watcher.changed()
                    if not changed and any(k in pressed for k in RERUN_KEYS):
                        changed = list(self.files)
                    for path in changed:
                        self.check(path, live)
                    if all(r is not None and r.status == "pass" for r in self.results.values()):
                        return "done"
        finally:
            watcher.close()

    def check(self, path: Path, live) -> None:
        kata = self.files[path]
        elapsed = time.monotonic() - self.start
        result = self.checker.run(kata, path, drill=self.drill, elapsed=round(elapsed, 2))
        self.results[kata.id], self.last = result, result
        self.attempts[kata.id] += 1
        if result.status == "pass":
            self.green.setdefault(kata.id, elapsed)
        if live is None:  # no dashboard: one line per check
            self.out.print(Text.assemble((f"[{practice.clock(elapsed)}] ", "dim"), (kata.id, "bold"), " ",
                                         status_text(result.status), f" · stage {result.stage or '–'}"))

    def dashboard(self, left: float, keys: bool) -> Group:
        countdown = say(self.lang, "drill.left", time=practice.clock(left))
        head = Text.assemble(("kata drill", "bold"), (f" · {self.preset} · {self.minutes:g} min · ", "dim"),
                             (countdown, "bold red" if left < 60 else "bold cyan"))
        table = Table(box=box.SIMPLE_HEAD)
        for column in ("kata", "status", "stage reached", "attempts", "first green"):  # paths: printed at the start
            table.add_column(column, justify="right" if column == "attempts" else "left", no_wrap=column == "kata")
        for kata in self.files.values():
            r = self.results[kata.id]
            table.add_row(Text(kata.id, style="bold"),
                          status_text(r.status) if r else Text(STATUS_LABEL["not_started"], style="dim"),
                          (r.stage if r else None) or "–", str(self.attempts[kata.id]),
                          practice.clock(self.green.get(kata.id)))
        parts = [head, table]
        if keys:
            parts.append(Text(say(self.lang, "drill.keys"), style="dim"))
        if self.last is not None:
            parts.append(kata_panel(self.last))
        return Group(*parts)
