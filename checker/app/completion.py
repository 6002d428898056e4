"""`kata completion bash|zsh|fish`: a completion script, read from the parser itself (checker.app.cli.build_parser).

What completes, in the three shells alike: the commands; each command's options; the values of an option
that takes fixed ones (--lang en|zh, --format text|json|problems), folders after --workspace and `init`,
nothing after a number (--timeout S); kata names (with their titles), drill presets, and after `kata check`
the .py files too (`kata check drills/DATE/torch/attention.py`). The zsh script needs no compinit of the
user's: it runs compinit itself where nothing has (macOS's zsh runs none), then registers with compdef.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field

from rich.console import Console

from checker import catalogue
from checker.errors import EXIT_OK
from checker.lang import language, tr


# ----------------------------------------------------------------------------- what completes, shell aside


@dataclass(frozen=True)
class Option:
    names: tuple[str, ...]  # ("-w", "--workspace")
    help: str
    takes: str | None = None  # None: a flag; "words": one of `words`; "folder"; "value": free (a number)
    words: tuple[str, ...] = ()


@dataclass
class Command:
    name: str
    help: str
    options: list[Option] = field(default_factory=list)
    words: list[tuple[str, str]] = field(default_factory=list)  # (word, description): katas, presets, shells
    kind: str = ""  # what the words are: "katas", "drill" (presets, then katas) or "words" (a shell's name)
    label: str = ""  # the same, said to the user: kata, preset or kata, shell
    many: bool = False  # several words (kata check a b), or one
    files: str | None = None  # "py": .py files and folders (kata check PATH); "folder": folders only


def _option(action: argparse.Action) -> Option | None:
    if action.help == argparse.SUPPRESS:
        return None
    if action.nargs == 0:
        return Option(tuple(action.option_strings), str(action.help or ""))
    if action.choices:
        return Option(tuple(action.option_strings), str(action.help or ""), "words", tuple(action.choices))
    takes = "folder" if action.metavar == "DIR" else "value"
    return Option(tuple(action.option_strings), str(action.help or ""), takes)


def model() -> tuple[list[Option], list[Command]]:
    """The top level's options, and each command with its options and the words that follow it."""
    from checker.app.cli import build_parser
    from checker.app.practice import PRESETS

    lang = language()
    katas = [(k.id, k.title_in(lang)) for k in catalogue.all_katas()]
    presets = [(name, tr(preset.title)) for name, preset in PRESETS.items()]
    parser = build_parser()
    sub = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {choice.dest: str(choice.help) for choice in sub._choices_actions}
    top = [o for o in map(_option, (a for a in parser._actions if a.option_strings)) if o]
    commands = []
    for name, p in sub.choices.items():
        command = Command(name, helps.get(name, ""))
        for action in p._actions:
            if action.option_strings:
                if (option := _option(action)) is not None:
                    command.options.append(option)
            elif action.choices:
                command.words, command.kind, command.label = [(str(c), "") for c in action.choices], "words", tr("shell")
            elif action.metavar == "DIR":
                command.files = "folder"
            else:  # NAME, PRESET|NAME
                drill = "PRESET" in (action.metavar or "")
                command.words = (presets if drill else []) + katas
                command.kind = "drill" if drill else "katas"
                command.label = tr("preset or kata") if drill else tr("kata")
                command.many = action.nargs in ("*", "+")
        if name == "check":
            command.files = "py"  # any file of the workspace: kata check drills/DATE/torch/attention.py
        commands.append(command)
    return top, commands


def cmd_completion(args, console: Console) -> int:
    """Print the script for args.shell."""
    top, commands = model()
    print({"bash": bash, "zsh": zsh, "fish": fish}[args.shell](top, commands))
    return EXIT_OK


# ----------------------------------------------------------------------------- bash


def bash(top: list[Option], commands: list[Command]) -> str:
    """A function for `complete -F`, driven by COMP_WORDS and COMP_CWORD; no bash-completion package needed
    (compopt, which puts a / after a folder, is used where the bash has it: 4.0 and later)."""
    by_kind: dict[str, list[str]] = {}
    for command, options in [("", top)] + [(c.name, c.options) for c in commands]:
        for o in options:
            if o.takes:
                key = "words " + " ".join(o.words) if o.takes == "words" else o.takes
                by_kind.setdefault(key, []).extend(f"{command}:{n}" for n in o.names)
    value_cases = []
    for key, patterns in by_kind.items():
        if key.startswith("words "):
            body = f"COMPREPLY=( $(compgen -W {_sh(key[6:])} -- \"$cur\") )"
        elif key == "folder":
            body = "_kata_paths folder \"$cur\""
        else:
            body = ":"  # a number: nothing to offer
        value_cases.append(f"        {'|'.join(patterns)}) {body}; return ;;")
    value_words = sorted({n for o in top if o.takes for n in o.names})  # a top option's value is no command
    command_cases = "\n".join(
        f"        {c.name}) opts={_sh(' '.join(n for o in c.options for n in o.names))}; "
        f"words={_sh(' '.join(w for w, _ in c.words))}; files={c.files or ''} ;;" for c in commands)
    skip = "|".join(value_words) or "--lang"
    return f"""# kata completion for bash: eval "$(kata completion bash)" in ~/.bashrc
_kata() {{
    local cur=${{COMP_WORDS[COMP_CWORD]}} prev= command= opts= words= files= i
    (( COMP_CWORD > 0 )) && prev=${{COMP_WORDS[COMP_CWORD-1]}}
    # --lang=zh: bash splits the word at '=' (COMP_WORDBREAKS), so the value follows a word '='
    if [[ $cur == = ]]; then cur=
    elif [[ $prev == = ]] && (( COMP_CWORD > 1 )); then prev=${{COMP_WORDS[COMP_CWORD-2]}}; fi
    for (( i = 1; i < COMP_CWORD; i++ )); do
        case ${{COMP_WORDS[i]}} in
            {skip}) [[ ${{COMP_WORDS[i+1]}} == = ]] && (( i++ )); (( i++ )) ;;
            -*) ;;
            *) command=${{COMP_WORDS[i]}}; break ;;
        esac
    done
    case $command:$prev in
{chr(10).join(value_cases)}
    esac
    if [[ -z $command ]]; then
        if [[ $cur == -* ]]; then words={_sh(' '.join(n for o in top for n in o.names))}
        else words={_sh(' '.join(c.name for c in commands))}; fi
        COMPREPLY=( $(compgen -W "$words" -- "$cur") )
        return
    fi
    case $command in
{command_cases}
    esac
    if [[ $cur == -* ]]; then COMPREPLY=( $(compgen -W "$opts" -- "$cur") ); return; fi
    COMPREPLY=( $(compgen -W "$words" -- "$cur") )
    [[ -n $files ]] && _kata_paths "$files" "$cur"
    return 0
}}
_kata_paths() {{  # $1: py (the .py files and the folders) or folder; names with spaces kept whole
    local IFS=$'\\n'
    compopt -o filenames 2>/dev/null
    [[ $1 == py ]] && COMPREPLY+=( $(compgen -f -X '!*.py' -- "$2") )
    COMPREPLY+=( $(compgen -d -- "$2") )
}}
complete -F _kata kata"""


def _sh(text: str) -> str:
    """A single-quoted word for bash or zsh."""
    return "'" + text.replace("'", "'\\''") + "'"


# ----------------------------------------------------------------------------- zsh


def zsh(top: list[Option], commands: list[Command]) -> str:
    """zsh's own completion (_arguments, _describe): descriptions beside commands, options and katas."""
    labels = {"folder": _label(tr("folder")), "value": _label(tr("number")), "file": _label(tr("kata or file"))}

    def spec(option: Option) -> list[str]:
        action = {"words": f":{_label(option.names[-1].lstrip('-'))}:({' '.join(option.words)})",
                  "folder": f":{labels['folder']}:_files -/",
                  "value": f":{labels['value']}: "}.get(option.takes or "", "")
        exclusive = f"({' '.join(option.names)})" if len(option.names) > 1 else ""
        if option.names[-1] in ("--help", "--version"):
            exclusive = "(- *)"  # nothing else after them
        specs = []
        for name in option.names:
            form = ("=" if name.startswith("--") else "+") if option.takes else ""  # --lang zh, --lang=zh; -n3
            specs.append(_sh(f"{exclusive}{name}{form}[{_bracketed(option.help)}]{action}"))
        return specs

    def arguments(command: Command) -> list[str]:
        specs = [s for o in command.options for s in spec(o)]
        if command.files == "py":
            specs.append(_sh(f"*:{labels['file']}:_kata_targets"))
        elif command.files == "folder":
            specs.append(_sh(f":{labels['folder']}:_files -/"))
        elif command.words:
            helper = {"katas": "_kata_katas", "drill": "_kata_drills"}.get(command.kind, f"_kata_words_{command.name}")
            specs.append(_sh(f"{'*' if command.many else '1'}:{_label(command.label)}:{helper}"))
        return specs

    def described(items: list[tuple[str, str]]) -> str:  # _describe's word:description, : in a word escaped
        return " ".join(_sh(w.replace(":", "\\:") + (f":{' '.join(d.split())}" if d else "")) for w, d in items)

    def listing(function: str, command: Command) -> str:
        return (f"{function}() {{ local -a words=( {described(command.words)} ); "
                f"_describe -t words {_sh(command.label)} words }}")

    katas = next(c for c in commands if c.kind == "katas")
    drill = next(c for c in commands if c.kind == "drill")
    helpers = [listing("_kata_katas", katas), listing("_kata_drills", drill)]
    helpers += [listing(f"_kata_words_{c.name}", c) for c in commands if c.kind == "words"]
    cases = []
    for c in commands:
        specs = " \\\n                    ".join(arguments(c))
        cases.append(f"                {c.name}) _arguments -s -S \\\n                    {specs} && ret=0 ;;")
    top_specs = " \\\n        ".join(s for o in top for s in spec(o))
    targets = f"'katas:{_label(tr('kata'))}:_kata_katas' 'files:{_label(tr('file'))}:_files -g \"*.py(-.)\"'"
    return f"""#compdef kata
# kata completion for zsh: eval "$(kata completion zsh)" in ~/.zshrc. Where nothing has run compinit (macOS's zsh
# runs none), it runs it; or save it as _kata in a folder of $fpath, before compinit.
{chr(10).join(helpers)}
_kata_targets() {{ _alternative {targets} }}
_kata() {{
    local curcontext=$curcontext state state_descr line ret=1
    typeset -A opt_args
    _arguments -C \\
        {top_specs} \\
        '1: :->command' \\
        '*:: :->argument' && ret=0
    case $state in
        command)
            local -a commands=( {described([(c.name, c.help) for c in commands])} )
            _describe -t commands {_sh(tr("command"))} commands && ret=0 ;;
        argument)
            curcontext=${{curcontext%:*:*}}:kata-$words[1]:
            case $words[1] in
{chr(10).join(cases)}
            esac ;;
    esac
    return ret
}}
if [[ $funcstack[1] == _kata ]]; then  # autoloaded from $fpath: complete now
    _kata "$@"
else  # eval'd from ~/.zshrc: compdef needs compinit, which macOS's zsh does not run
    (( $+functions[compdef] )) || {{ autoload -Uz compinit && compinit -i }}
    compdef _kata kata
fi"""


def _label(text: str) -> str:
    """A message between colons in an _arguments spec: no colon of its own."""
    return " ".join(str(text).split()).replace(":", " ")


def _bracketed(text: str) -> str:
    """Help text as an _arguments description: between [ and ], on one line."""
    return " ".join(text.split()).replace("[", "(").replace("]", ")").replace("\\", "/")


# ----------------------------------------------------------------------------- fish


def fish(top: list[Option], commands: list[Command]) -> str:
    """complete -c kata lines; __kata_command finds the command on the line (after kata --lang zh too)."""
    def option(o: Option, condition: str) -> str:
        names = " ".join(f"-l {n[2:]}" if n.startswith("--") else f"-s {n[1:]}" for n in o.names)
        takes = {"words": f" -x -a {_fq(' '.join(o.words))}",
                 "folder": " -x -a '(__fish_complete_directories (commandline -ct))'",
                 "value": " -x"}.get(o.takes or "", "")
        return f"complete -c kata -n {_fq(condition)} {names}{takes} -d {_fq(o.help)}"

    lines = [
        "# kata completion for fish: kata completion fish > ~/.config/fish/completions/kata.fish",
        "function __kata_command --description 'the kata command on the line, if there is one yet'",
        "    set -l words (commandline -opc)",
        "    set -e words[1]",
        "    while set -q words[1]",
        "        switch $words[1]",
        f"            case {' '.join(n for o in top if o.takes for n in o.names) or '--lang'}",
        "                set -e words[1]",
        "            case '-*'",
        "            case '*'",
        "                echo $words[1]",
        "                return 0",
        "        end",
        "        set -e words[1]",
        "    end",
        "    return 1",
        "end",
        "function __kata_on --argument-names name",
        "    set -l command (__kata_command); and test \"$command\" = \"$name\"",
        "end",
    ]
    listed = {}
    for c in commands:
        if c.words:
            key = tuple(c.words)
            if key not in listed:
                listed[key] = {"katas": "__kata_katas", "drill": "__kata_drills"}.get(c.kind, f"__kata_words_{c.name}")
                lines += [f"function {listed[key]}",
                          *(f"    printf '%s\\t%s\\n' {_fq(w)} {_fq(d)}" for w, d in c.words), "end"]
    lines += ["complete -c kata -e", "complete -c kata -f"]
    lines += [f"complete -c kata -n 'not __kata_command' -a {_fq(c.name)} -d {_fq(c.help)}" for c in commands]
    lines += [option(o, "not __kata_command") for o in top]
    for c in commands:
        on = f"__kata_on {c.name}"
        lines += [option(o, on) for o in c.options]
        words = f"({listed[tuple(c.words)]})" if c.words else ""
        if c.files == "py":  # files, as fish offers them (its __fish_complete_suffix filters nothing, only sorts)
            lines.append(f"complete -c kata -n {_fq(on)} -F -a '{words}'")
        elif c.files == "folder":
            lines.append(f"complete -c kata -n {_fq(on)} -x -a '(__fish_complete_directories (commandline -ct))'")
        elif words:
            lines.append(f"complete -c kata -n {_fq(on)} -x -a '{words}'")
    return "\n".join(lines)


def _fq(text: str) -> str:
    """A single-quoted word for fish (where \\ and ' are escaped inside the quotes), on one line."""
    return "'" + " ".join(str(text).split()).replace("\\", "\\\\").replace("'", "\\'") + "'"
