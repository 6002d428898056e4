"""The `kata` command. main(argv) -> exit status; one function per command (COMMANDS).

Only `check`, `watch` and `drill` import torch (lazily); every other command and `--help` stay fast.
The practice commands live in checker.app.practice (hint, solution, reset, stats, next) and
checker.app.live (watch, drill); what all commands share is in checker.app.terminal.
"""

from __future__ import annotations

import argparse
import errno
import importlib
import os
import sys
from contextlib import closing, contextmanager
from pathlib import Path

from rich.console import Console
from rich.cells import cell_len
from rich.text import Text

from checker import __version__, catalogue
from checker.app import environment
from checker.state import workspace
from checker.catalogue import UnknownKata
from checker.lang import LANGUAGES, chosen_language, language, say, speaking, tr
from checker.catalogue import SOLUTIONS
from checker.state.progress import ProgressError
from checker.errors import EXIT_INTERNAL, EXIT_INTERRUPTED, EXIT_NOT_PASSED, EXIT_OK, EXIT_USAGE, UsageError
from checker.state.progress import open_progress
from checker.app.terminal import KataConsole, Wrapped, open_workspace, print_json, safe_streams, warn
from checker.state.workspace import WorkspaceError

EPILOG = """\
exit status:
  0  every kata checked passes (other commands: success)
  1  a kata checked does not pass (fail, not_started, error or timeout)
  2  usage error: unknown kata or command, bad option, unusable workspace,
     an unknown key in catalogue.toml or a zh.toml
  3  internal error of kata itself (please report it; --traceback shows it)
  130 interrupted (Ctrl-C)

mask convention (every kata): a boolean mask, True = this query may attend to this key.
"""




# ----------------------------------------------------------------------------- commands


def cmd_init(args, console: Console) -> int:
    lang = language(args.lang)
    path = workspace.resolved(args.dir or ".")
    created = workspace.init(path)
    console.print(Wrapped(say(lang, "init.ready", path=path), style="bold green"))
    if created:
        console.print(Wrapped(say(lang, "init.copied", count=len(created)), style="dim"))
    else:
        console.print(Wrapped(say(lang, "init.none"), style="dim"))
    # Wrapped, not rich's wrapping: a command (kata check attention) stays on one line
    console.print(Wrapped(say(lang, "init.next", file=path / "torch" / "attention.py", path=path)))
    return EXIT_OK


def cmd_show(args, console: Console) -> int:
    kata = catalogue.find(args.name)
    from checker.app.statement import HINTS, hints, numbered, read, render, without

    lang = language(args.lang)
    text, shown = read(kata, lang)
    if shown != lang and args.lang:
        console.print(Wrapped(tr("No Chinese statement for {kata} yet; showing English.", kata=kata.id), style="yellow"))
    # the hints are a ladder: `kata hint` gives one rung at a time. crop=False: a code line wider than the
    # terminal runs past its edge, never re-flowed
    console.print(render(without(text, HINTS)), crop=False)
    if args.hints:
        progress = open_progress(open_workspace(args, console))
        try:
            taken = min(progress.hints_seen(kata.id, None), len(hints(kata, shown)))
        finally:
            progress.close()
        if not taken:
            console.print(Wrapped("\n" + say(lang, "show.no_hints_taken", kata=kata.id), style="yellow"))
        else:
            levels = hints(kata, shown)
            console.print(Wrapped("\n" + say(lang, "show.hints_taken", taken=taken, total=len(levels)), style="bold"))
            console.print(render(numbered(levels[:taken])), crop=False)
    else:
        console.print(Wrapped("\n" + say(lang, "show.hints", kata=kata.id), style="dim"))
    if kata.forbidden:  # from the registry, the one list the checks enforce
        console.print(Wrapped("\n" + say(lang, "show.forbidden", names=", ".join(kata.forbidden)), style="bold"))
    console.print(Wrapped("\n" + say(lang, "show.file", file=kata.file, kata=kata.id), style="dim"))
    return EXIT_OK


def cmd_check(args, console: Console) -> int:
    lang = language(args.lang)
    if not args.all and not args.names:
        raise UsageError(tr("name a kata to check (for example `kata check attention`) or use --all"))
    ws, targets = _targets(args, console)
    katas = [target.kata for target in targets]
    if args.case is not None and len(katas) != 1:
        raise UsageError(tr("--case needs exactly one kata"))
    jobs = args.jobs or 1
    if args.jobs is None and len(katas) > 1:
        from checker.warm.parallel import default_jobs

        jobs = default_jobs()  # one process per core
    here = args.case is None and (jobs == 1 or len(katas) == 1)  # checked in this process, or by its server
    session = _session(args, ws, targets) if here else None
    if here and session is None:
        from checker.sandbox import processes

        processes.prestart(keep=len(katas) > 1)  # spawn, forkserver: the child imports torch while we do
    if args.case is not None:
        from checker import engine  # torch is imported here, and only here

        return _print_case(console, engine, katas[0], args.case, lang)
    if session is not None:  # drawn while the server checks
        from checker.app import report  # noqa: F401
    progress = None
    if ws is not None:
        try:
            progress = open_progress(ws)
        except ProgressError as err:
            warn(console, str(err))
    results = []
    shows_progress = args.format == "text" and not args.json and len(katas) > 1 and console.is_terminal  # pipes: no
    with closing(_checked(targets, args, jobs, session, ws, lambda said: warn(console, str(said)))) as checked:
        for target in targets:
            if shows_progress:
                console.print(Text(say(lang, "check.progress", kata=target.kata.id), style="dim"), end="\r")
            result = next(checked)
            results.append(result)
            if target.unrecorded:  # another file than the workspace's own: its history stays the workspace file's
                warn(console, str(target.unrecorded), style="dim")
            elif progress is not None:
                try:
                    progress.record(result)
                except ProgressError as err:
                    warn(console, str(err))
                    progress = None
    status = EXIT_OK if all(r.status == "pass" for r in results) else EXIT_NOT_PASSED
    from checker.app import report

    try:
        with speaking(lang):
            if args.json or args.format == "json":
                print_json({"katas": [report.as_json(r) for r in results]})
            elif args.format == "problems":
                for line in report.problems(results):
                    print(line)
            else:
                report.print_results(console, results, verbose=args.verbose)
    except BrokenPipeError:  # `kata check ... | head`: the reader left; the verdict is still the verdict
        _silence_stdout()
    return status


def check_options(args) -> dict:
    """engine.check_file's keywords from `kata check`'s options (%%kata and check() read them the same way)."""
    return {"timeout": args.timeout, "show_weights": args.show_weights, "memory_gb": args.memory,
            "strict": args.strict}


def _session(args, ws: Path | None, targets):
    """The workspace's resident checker (checker.warm), when one answers, asked for the checks of targets at once;
    else None, and one is started in the background for the next check (it waits for this process to end before
    it imports torch). Never with --no-server (or KATA_NO_SERVER), --solution, or without a workspace."""
    from checker.lang import spoken
    from checker.warm import client

    if ws is None or args.solution or not client.wanted(args.no_server):
        return None
    session = client.connect(ws)
    if session is None:
        client.start(ws, after=os.getpid())
        return None
    session.send([(target.kata.id, target.path) for target in targets], check_options(args), spoken())
    return session


def _checked(targets, args, jobs: int, session=None, ws: Path | None = None, notice=None):
    """Each target's result, in the order of targets: one after the other by the workspace's server (session), or
    in this process (-j 1, or one kata), else on `jobs` processes at once (checker.warm.parallel), the verdicts the
    same. What the server does not answer (it was stopped or killed midway) is checked here. notice: told what
    went wrong on the way (a parallel worker that ended), to say on stderr."""
    options = check_options(args)
    paths = [SOLUTIONS / target.kata.file if args.solution else target.path for target in targets]
    if jobs > 1 and len(targets) > 1:
        from checker.warm import parallel

        yield from parallel.check_all([(target.kata.id, path) for target, path in zip(targets, paths)], jobs, options,
                                      notice)
        return
    work = list(zip(targets, paths))
    if session is not None:  # asked already (_session)
        for result in session.results():
            work.pop(0)
            yield result
    from checker import engine  # torch is imported here, and only here

    try:
        for target, path in work:
            yield engine.check_file(target.kata, path, **options)
    finally:  # also when the caller closes this after the last result
        if session is not None and work:  # the server stopped answering: a new one for the next check
            from checker.warm import client

            client.start(ws, after=os.getpid(), grace=5.0)


def _silence_stdout() -> None:
    """The reader of stdout has gone: what is left to print goes nowhere, and no error follows at exit."""
    os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())


# ----------------------------------------------------------------------------- helpers


def _targets(args, console: Console) -> tuple[Path | None, list[workspace.Target]]:
    """The workspace (None for --solution and --case, which need only the kata) and what `kata check` checks:
    every kata (--all), or each NAME or PATH named. A path is any file of the workspace (a drill's too), and the
    workspace holding it is used when none is given. Names are looked up before the workspace is opened, so that
    a misspelt one creates nothing."""
    named = [] if args.all else [(name, workspace.named_file(name)) for name in args.names]
    for name, path in named:
        if path is not None:
            workspace.kata_of(path)
        elif not workspace.names_a_file(name):  # a path may lie in the workspace, not found yet
            catalogue.find(name)
    if args.solution or args.case is not None:  # the kata is all that is needed: no workspace
        ws = None
    else:
        ws = open_workspace(args, console, near=tuple(path for _, path in named if path is not None))
    if args.all:
        return ws, [workspace.Target(k, workspace.kata_file(ws, k) if ws else None) for k in catalogue.all_katas()]
    return ws, [workspace.target(name, ws) for name in args.names]


def _print_case(console: Console, engine, kata, number: int, lang: str) -> int:
    """A snippet that rebuilds case number and compares the user's code with the reference in a REPL."""
    from rich.syntax import Syntax

    from checker.lang import speaking

    with speaking(lang):
        try:
            snippet = engine.Replay(kata, number).snippet()
        except LookupError as err:
            raise UsageError(str(err)) from None
    if console.is_terminal:
        console.print(Syntax(snippet, "python", theme="ansi_dark", background_color="default", word_wrap=True))
    else:
        print(snippet, end="")  # a pipe or a file gets the code exactly, to run as it is
    return EXIT_OK


def cmd_server(args, console) -> int:
    """kata server start|status|stop: the workspace's resident checker (checker.warm)."""
    from checker.warm import client

    ws = open_workspace(args, console)
    status = client.ACTIONS[args.action](ws)
    if args.json:
        print_json(status)
    else:
        console.print(Wrapped(status.pop("said")))
    return EXIT_OK


# ----------------------------------------------------------------------------- parser


# A command is a function, or "module:function" for one imported only when that command runs.
COMMANDS = {"init": cmd_init, "list": "checker.app.listing:cmd_list", "show": cmd_show, "check": cmd_check,
            "watch": "checker.app.live:cmd_watch", "drill": "checker.app.live:cmd_drill",
            "hint": "checker.app.practice:cmd_hint", "solution": "checker.app.practice:cmd_solution",
            "reset": "checker.app.practice:cmd_reset", "stats": "checker.app.practice:cmd_stats",
            "next": "checker.app.practice:cmd_next", "quiz": "checker.quiz.ask:cmd_quiz", "completion": "checker.app.completion:cmd_completion",
            "server": cmd_server}


def _command(name: str):
    command = COMMANDS[name]
    if isinstance(command, str):
        module, _, function = command.partition(":")
        command = getattr(importlib.import_module(module), function)
    return command


def _positive(text: str) -> float:
    """A number above 0 and at most a million (seconds, gigabytes, minutes); nan and inf are usage errors."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(tr("'{text}' is not a number", text=text)) from None
    if not (0 < value <= 1e6):
        raise argparse.ArgumentTypeError(tr("'{text}' must be a number above 0 and at most 1000000", text=text))
    return value


def _jobs(text: str) -> int:
    """A whole number of jobs, at least 1."""
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(tr("'{text}' is not a whole number", text=text)) from None
    if not 1 <= value <= 1024:
        raise argparse.ArgumentTypeError(tr("'{text}' must be a whole number from 1 to 1024", text=text))
    return value


class _Help(argparse.RawDescriptionHelpFormatter):
    """Help lines wrapped by terminal cells, CJK-aware: argparse's textwrap counts characters, breaks at
    spaces only, and so let a Chinese help line run far past the edge."""

    def _split_lines(self, text: str, width: int) -> list[str]:
        from checker.app.terminal import wrap

        return [line.plain for line in wrap(Text(" ".join(text.split())), width)]

    def _format_usage(self, usage, actions, groups, prefix):
        """argparse aligns the usage by len(prefix); "用法：" is 3 characters but 6 cells wide."""
        prefix = tr("usage: ") if prefix is None else prefix
        blank = " " * cell_len(prefix)
        return prefix + super()._format_usage(usage, actions, groups, blank)[len(blank):]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kata", formatter_class=_Help, epilog=tr(EPILOG),
        description=tr("Hand-write the Transformer, part by part, and get a strict, truthful verdict."))
    parser.add_argument("--version", action="version", version=f"kata {__version__}",
                        help=tr("show kata's version and exit"))
    parser.add_argument("--lang", choices=LANGUAGES, dest="lang_first", help=tr("language (default: from your locale)"))
    parser.add_argument("--traceback", action="store_true", help=tr("show kata's own stack trace on internal errors"))
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def command(name, help_text):
        p = sub.add_parser(name, help=help_text, description=help_text, epilog=tr(EPILOG),
                           formatter_class=_Help)
        p.add_argument("--traceback", action="store_true", help=argparse.SUPPRESS)
        return p

    def with_lang(p):
        p.add_argument("--lang", choices=LANGUAGES, help=tr("language (default: from your locale)"))

    def with_json(p):
        p.add_argument("--json", action="store_true", help=tr("print one JSON document and nothing else"))

    def with_limits(p):
        p.add_argument("--timeout", type=_positive, default=10.0, metavar="S",
                       help=tr("seconds one call into your code may take (default: 10)"))
        p.add_argument("--memory", type=_positive, default=4.0, metavar="GB",
                       help=tr("memory your code may use on top of torch itself (default: 4)"))
        p.add_argument("--strict", action="store_true",
                       help=tr("the full contract: accepted variants and follow-up questions fail too"))

    def with_workspace(p):
        p.add_argument("--workspace", "-w", metavar="DIR",
                       help=tr("the workspace to use (default: $KATA_WORKSPACE, the current folder or a parent, "
                            "else a default workspace in your data folder)"))

    p = command("init", tr("make a practice folder holding fresh copies of every stub (never overwrites)"))
    p.add_argument("dir", nargs="?", metavar="DIR", help=tr("folder to create or complete (default: the current one)"))
    with_lang(p)

    p = command("list", tr("the catalogue in learning order, with your status and your code's fastest run"))
    with_workspace(p)
    with_json(p)
    with_lang(p)

    p = command("show", tr("print a kata's statement: what to build, formula, shapes, pitfalls (hints: kata hint)"))
    p.add_argument("name", metavar="NAME", help=tr("kata, e.g. attention or numpy/softmax"))
    p.add_argument("--hints", action="store_true", help=tr("also print the hint levels you have already taken"))
    with_lang(p)
    with_workspace(p)

    p = command("check", tr("run the hidden checks on your file(s) and report what is right and wrong"))
    p.add_argument("names", nargs="*", metavar="NAME", help=tr("kata(s), e.g. attention or numpy/attention"))
    p.add_argument("--all", action="store_true", help=tr("check every kata"))
    p.add_argument("--solution", action="store_true", help=tr("check the reference answers instead of your files"))
    p.add_argument("--case", type=int, metavar="N", help=tr("print Python that rebuilds case N and compares your code with the reference"))
    p.add_argument("--jobs", "-j", type=_jobs, metavar="N",
                   help=tr("check up to N katas at once, one process each (default: the number of cores)"))
    with_limits(p)
    p.add_argument("--show-weights", action="store_true",
                   help=tr("draw your attention weights beside the expected ones (also shown when masking fails)"))
    p.add_argument("--verbose", "-v", action="store_true", help=tr("also list skipped checks and every stub"))
    with_json(p)
    p.add_argument("--format", choices=("text", "json", "problems"), default="text",
                   help=tr("problems: one path:line:col: error|warning: stage: message line per problem, for editors"))
    p.add_argument("--no-server", action="store_true",
                   help=tr("check in this process only: never use or start the workspace's resident checker"))
    with_workspace(p)
    with_lang(p)

    p = command("watch", tr("re-check your file on every save (r or Enter: re-check, q: quit)"))
    p.add_argument("name", nargs="?", metavar="NAME",
                   help=tr("the kata to watch (default: every kata file, starting with the first not passed)"))
    p.add_argument("--poll", action="store_true",
                   help=tr("only poll the files' times, without file events (network drives, some containers)"))
    with_limits(p)
    with_lang(p)
    with_workspace(p)

    p = command("drill", tr("a timed mock interview: fresh stubs, a countdown, re-checks on save, a scored report"))
    p.add_argument("names", nargs="*", metavar="PRESET|NAME",
                   help=tr("a preset (see --list) or the katas to drill, e.g. attention multi_head_attention"))
    p.add_argument("--list", action="store_true", help=tr("list the presets"))
    p.add_argument("--minutes", type=_positive, metavar="M",
                   help=tr("time allowed (default: the preset's, or 10 minutes per star of difficulty)"))
    p.add_argument("--allow-hints", action="store_true",
                   help=tr("allow `kata hint` and `kata solution` during the drill (they cost points)"))
    p.add_argument("--poll", action="store_true", help=tr("only poll the files' times, without file events"))
    p.add_argument("--quiz", type=int, default=0, metavar="N",
                   help=tr("end with N interview questions on the drill's katas, scored apart (default: none)"))
    with_limits(p)
    with_json(p)
    with_lang(p)
    with_workspace(p)

    p = command("hint", tr("the next hint for a kata: concept, then shapes and steps, then near-code"))
    p.add_argument("name", metavar="NAME", help=tr("kata, e.g. attention or numpy/softmax"))
    with_json(p)
    with_lang(p)
    with_workspace(p)

    p = command("solution", tr("the reference answer, highlighted, with why it is written that way"))
    p.add_argument("name", metavar="NAME", help=tr("kata, e.g. attention or numpy/softmax"))
    p.add_argument("--yes", "-y", action="store_true", help=tr("do not ask first (needed without a terminal)"))
    with_lang(p)
    with_workspace(p)

    p = command("reset", tr("put the blank stub back; your file is kept as a dated backup in WORKSPACE/backups"))
    p.add_argument("names", nargs="*", metavar="NAME", help=tr("kata(s) to reset"))
    p.add_argument("--all", action="store_true", help=tr("reset every kata"))
    p.add_argument("--yes", "-y", action="store_true", help=tr("do not ask first (needed without a terminal)"))
    with_lang(p)
    with_workspace(p)

    p = command("stats", tr("your history: attempts, pass rate, time to green, hints and solutions used, drills"))
    with_json(p)
    with_lang(p)
    with_workspace(p)

    p = command("next", tr("what to practise now: work in progress, reviews that are due, then new katas in order"))
    p.add_argument("--count", "-n", type=int, default=3, metavar="N", help=tr("how many suggestions (default: 3)"))
    with_json(p)
    with_lang(p)
    with_workspace(p)

    p = command("quiz", tr("the oral round: interview questions, checked and explained, brought back when due"))
    p.add_argument("what", nargs="*", metavar="TOPIC|KATA|ID",
                   help=tr("ask on these topics (see --list), katas or questions (default: what is due, then new)"))
    p.add_argument("--count", "-n", type=int, default=5, metavar="N", help=tr("how many questions (default: 5)"))
    p.add_argument("--answer", nargs=2, metavar=("ID@SEED", "ANSWER"),
                   help=tr("check one answer to a question drawn by --json or --print; exit status 0 if right, 1 if not"))
    p.add_argument("--print", action="store_true", help=tr("print the questions instead of asking them (notebooks)"))
    p.add_argument("--list", action="store_true", help=tr("list the topics and how many questions each has"))
    with_json(p)
    with_lang(p)
    with_workspace(p)

    p = command("server", tr("the workspace's resident checker, which keeps torch imported so that a check takes a "
                            "fraction of a second: start it, see its status, or stop it"))
    p.add_argument("action", choices=("start", "status", "stop"), help=tr("start, status or stop"))
    with_json(p)
    with_lang(p)
    with_workspace(p)

    p = command("completion", tr("print a shell completion script: eval \"$(kata completion bash)\" in ~/.bashrc"))
    p.add_argument("shell", choices=("bash", "zsh", "fish"), help=tr("bash, zsh or fish"))
    return parser


def _suggest_command(argv: list[str]) -> None:
    first = next((a for i, a in enumerate(argv) if not a.startswith("-") and argv[i - 1:i] != ["--lang"]), None)
    if first is not None and first not in COMMANDS:
        import difflib  # only for a command not found

        close = difflib.get_close_matches(first, COMMANDS, n=1)
        commands = ", ".join(COMMANDS)
        if close:
            raise UsageError(tr("unknown command '{name}'. Did you mean '{close}'? Commands: {commands}.",
                               name=first, close=close[0], commands=commands))
        raise UsageError(tr("unknown command '{name}'. Commands: {commands}.", name=first, commands=commands))


@contextmanager
def _argparse_speaking():
    """argparse's own words ("usage:", "error:", "invalid choice"...) through t(), as gettext would give them."""
    saved = argparse._, argparse.ngettext
    argparse._ = tr
    argparse.ngettext = lambda one, many, n: tr(one if n == 1 else many)
    try:
        yield
    finally:
        argparse._, argparse.ngettext = saved


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    safe_streams()
    with speaking(chosen_language(argv)), _argparse_speaking():
        return _main(argv)


def _main(argv: list[str]) -> int:
    console = KataConsole(highlight=False)
    show_trace = "--traceback" in argv
    args = None
    try:
        _suggest_command(argv)
        parser = build_parser()
        args, extra = parser.parse_known_args(argv)
        if extra:  # said by the command's own parser, so the usage shown is the command's
            commands = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction)).choices
            commands.get(args.command, parser).error(tr("unrecognized arguments: %s") % " ".join(extra))
        if args.command is None:
            parser.print_help()
            return EXIT_USAGE
        if getattr(args, "lang", None) is None:  # kata --lang zh COMMAND: before the command, as after it
            args.lang = args.lang_first
        return _command(args.command)(args, console)
    except SystemExit as exit_:  # argparse: --help gives 0, a bad option 2
        return exit_.code if isinstance(exit_.code, int) else EXIT_USAGE
    except (UsageError, UnknownKata, WorkspaceError, ProgressError) as err:
        # Wrapped, not rich's wrapping: a command or a `code` span in the message stays on one line
        Console(stderr=True, highlight=False).print(Wrapped(Text(f"kata: {err}", style="bold red")))
        return EXIT_USAGE
    except KeyboardInterrupt:
        Console(stderr=True).print(Text(tr("interrupted"), style="yellow"))
        return EXIT_INTERRUPTED
    except BrokenPipeError:  # `kata list | head`: the reader has had enough, which is no error of kata's
        _silence_stdout()
        return EXIT_OK
    except OSError as err:
        if err.errno != errno.EIO:
            return _internal_or_refused(err, args, show_trace)
        # The terminal went away (a closed window: SIGHUP ended a watch or drill, already recorded),
        # and writing the last report to it failed: nobody is left to read it, which is no error of kata's.
        for stream in (sys.stdout, sys.stderr):
            os.dup2(os.open(os.devnull, os.O_WRONLY), stream.fileno())
        return EXIT_INTERRUPTED
    except Exception as err:  # noqa: BLE001 - a bug in kata itself must still end cleanly
        return _internal_or_refused(err, args, show_trace)


def _internal_or_refused(err: Exception, args, show_trace: bool) -> int:
    """A read-only folder or a full disk, wherever kata had to write, is said with its real cause;
    a missing or broken dependency (torch that fails to import) is the user's environment, said with
    the install line; anything else is a bug in kata itself, which must still end cleanly."""
    if environment.broken_dependency(err):
        Console(stderr=True, highlight=False).print(Text(f"kata: {environment.message(err)}", style="bold red"),
                                                    soft_wrap=True)  # the command stays whole, to copy
        return EXIT_USAGE
    if isinstance(err, OSError) and err.errno in workspace.IN_THE_WAY:
        Console(stderr=True, highlight=False).print(Text(f"kata: {workspace.in_the_way(err)}", style="bold red"))
        return EXIT_USAGE
    why = workspace.reason(err) if isinstance(err, OSError) else None
    if why and isinstance(err, OSError) and err.filename is None:  # no file of kata's: its own output (> /dev/full)
        Console(stderr=True, highlight=False).print(Text(tr("kata: could not write its output: {error}",
                                                           error=err.strerror or err), style="bold red"))
        return EXIT_USAGE
    if why:
        folder = Path(err.filename).parent if err.filename else Path.cwd()
        Console(stderr=True, highlight=False).print(Text(
            f"kata: {workspace.refusal(folder, why, args.command if args else '')}", style="bold red"))
        return EXIT_USAGE
    if show_trace:
        raise err
    Console(stderr=True, highlight=False).print(Text(tr(
        "kata: internal error: {error} (run again with --traceback for details)",
        error=f"{type(err).__name__}: {err}"), style="bold red"))
    return EXIT_INTERNAL


def run() -> None:
    """The console script: main(), then, if torch was imported, exit without its teardown.

    Tearing torch down takes about 0.4 s on this project's machines, a third of a cold check.
    Everything kata writes is flushed or committed by now (SQLite commits each record).
    """
    code = main()
    if "torch" not in sys.modules:
        sys.exit(code)
    from checker.state.progress import close_all

    close_all()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:  # the window was closed or the reader left: nobody is left to read it
            pass
    os._exit(code)
