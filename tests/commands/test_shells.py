"""What meets the user's editor and shell: `kata check PATH` on any file of the workspace (a drill's too), the
completion scripts run by the real bash, zsh and fish, and the wheel pip installs, which holds the package's
files and no editor or notebook debris."""

import importlib.util
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from conftest import ROOT, run_json, run_kata

SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")


# ----------------------------------------------------------------------------- kata check PATH


@pytest.fixture
def drill_file(workspace):
    """A drill's copy of attention, laid out by the drill's own code, holding the reference; the workspace's own
    attention.py stays a stub, so a pass says which file was checked."""
    from checker import catalogue
    from checker.app import practice

    folder = practice.make_drill_folder(workspace, [catalogue.find("attention")])
    path = folder / "torch" / "attention.py"
    path.write_text(SOLUTION, encoding="utf-8")
    return path


def _tries(ws) -> dict:
    _, doc = run_json("stats", "--workspace", ws)
    return {k["name"]: k for k in doc["katas"]}


def test_a_drills_file_is_checked_by_its_path_from_the_workspace_as_an_editor_task_names_it(workspace, drill_file):
    relative = drill_file.relative_to(workspace).as_posix()  # VS Code's ${relativeFile}: drills/DATE/torch/...
    proc = run_kata("check", relative, "--workspace", workspace, "--format", "problems", cwd=workspace)
    assert proc.returncode == 0 and proc.stdout == "", proc.stdout + proc.stderr  # the stub would fail
    assert "no kata named" not in proc.stderr and "drill" in proc.stderr and "not recorded" in proc.stderr
    proc, doc = run_json("check", relative, cwd=workspace)  # the workspace found from the current folder
    assert proc.returncode == 0 and doc["katas"][0]["file"] == str(drill_file)
    assert "attention" not in _tries(workspace), "a drill's file is never recorded as the workspace's"


def test_a_path_in_full_from_anywhere_uses_the_workspace_that_holds_it(workspace, drill_file, tmp_path):
    proc, doc = run_json("check", drill_file, cwd=tmp_path)
    assert proc.returncode == 0 and doc["katas"][0]["status"] == "pass", proc.stderr
    assert "Created your workspace" not in proc.stderr
    zh = run_kata("check", drill_file, "--lang", "zh", cwd=tmp_path)
    assert zh.returncode == 0 and "计时练习的文件" in zh.stderr and "没有记录" in zh.stderr, zh.stderr


def test_the_workspaces_own_file_by_its_path_is_recorded_as_by_its_name(workspace, tmp_path):
    (workspace / "torch" / "attention.py").write_text(SOLUTION, encoding="utf-8")
    assert run_kata("check", "torch/attention.py", cwd=workspace).returncode == 0
    assert run_kata("check", "attention.py", cwd=workspace / "torch").returncode == 0
    assert run_kata("check", workspace / "torch" / "attention.py", cwd=tmp_path).returncode == 0
    proc = run_kata("check", "torch/attention.py", "--workspace", workspace, cwd=tmp_path)  # from the workspace
    assert proc.returncode == 0 and "not recorded" not in proc.stderr, proc.stderr
    assert _tries(workspace)["attention"]["attempts"] == 4


def test_a_backup_or_a_copy_elsewhere_is_checked_and_not_recorded(workspace, tmp_path):
    copy = tmp_path / "elsewhere" / "torch" / "attention.py"
    copy.parent.mkdir(parents=True)
    copy.write_text(SOLUTION, encoding="utf-8")
    proc = run_kata("check", copy, "--workspace", workspace)
    assert proc.returncode == 0 and "not the file of attention in the workspace" in " ".join(proc.stderr.split())
    assert "attention" not in _tries(workspace)


def test_a_path_that_is_no_kata_file_or_no_file_is_a_usage_error(workspace, tmp_path):
    stray = tmp_path / "notes.py"
    stray.write_text("x = 1\n", encoding="utf-8")
    data = tmp_path / "data"
    proc = run_kata("check", stray, cwd=tmp_path, env={"XDG_DATA_HOME": str(data)})
    assert proc.returncode == 2 and "is not a kata's file" in " ".join(proc.stderr.split()), proc.stderr
    assert not data.exists(), "said before a default workspace is made"
    proc = run_kata("check", "drills/20250101-000000/torch/attention.py", cwd=workspace)
    assert proc.returncode == 2 and "no such file" in proc.stderr and "no kata named" not in proc.stderr, proc.stderr


# ----------------------------------------------------------------------------- completion: bash


def _script(shell: str, tmp_path: Path) -> Path:
    proc = run_kata("completion", shell)
    assert proc.returncode == 0 and proc.stderr == "", proc.stderr
    path = tmp_path / f"kata.{shell}"
    path.write_text(proc.stdout, encoding="utf-8")
    return path


@pytest.fixture
def files(tmp_path):
    """A folder to complete in: a workspace's layout, with a drill's file, a file that is no kata's, a space."""
    here = tmp_path / "here"
    (here / "torch").mkdir(parents=True)
    (here / "drills" / "20250102-153000" / "torch").mkdir(parents=True)
    (here / "torch" / "attention.py").write_text("", encoding="utf-8")
    (here / "torch" / "notes.txt").write_text("", encoding="utf-8")
    (here / "drills" / "20250102-153000" / "torch" / "attention.py").write_text("", encoding="utf-8")
    (here / "my stuff").mkdir()
    return here


# (the words typed, the last one being completed; what must be offered; what must not)
LINES = [
    (["kata", ""], {"check", "init", "completion"}, {"attention"}),
    (["kata", "--lang", ""], {"en", "zh"}, {"check", "attention"}),
    (["kata", "--lang", "zh", "che"], {"check"}, set()),
    (["kata", "check", "--lang", ""], {"en", "zh"}, {"attention", "torch"}),
    (["kata", "check", "--format", ""], {"text", "json", "problems"}, {"attention", "torch"}),
    (["kata", "check", "--format", "p"], {"problems"}, {"text"}),
    (["kata", "check", "--timeout", ""], set(), {"attention", "torch"}),
    (["kata", "check", "att"], {"attention"}, set()),
    (["kata", "check", "torch/"], {"torch/attention.py"}, {"torch/notes.txt"}),
    (["kata", "check", "drills/20250102-153000/torch/"], {"drills/20250102-153000/torch/attention.py"}, set()),
    (["kata", "check", "-"], {"--lang", "--format", "--strict", "--workspace"}, set()),
    (["kata", "drill", "attention-c"], {"attention-core"}, set()),
    (["kata", "show", "numpy/so"], {"numpy/softmax"}, set()),
    (["kata", "completion", ""], {"bash", "zsh", "fish"}, set()),
    (["kata", "list", "--workspace", ""], {"torch", "drills", "my stuff"}, {"attention"}),
]


IDS = [" ".join(line) for line, _, _ in LINES]


def _bash_words(line: list[str]) -> str:
    return " ".join("''" if w == "" else "'" + w + "'" for w in line)


@pytest.mark.parametrize("line, offered, not_offered", LINES, ids=IDS)
def test_bash_completes_commands_option_values_katas_and_paths(line, offered, not_offered, files, tmp_path):
    script = _script("bash", tmp_path)
    command = (f"source {script}; COMP_WORDS=({_bash_words(line)}); COMP_CWORD={len(line) - 1}; _kata; "
               "printf '%s\\n' \"${COMPREPLY[@]}\"")
    done = subprocess.run(["bash", "--norc", "--noprofile", "-c", command], cwd=files, capture_output=True, text=True,
                          timeout=30)
    got = {w.rstrip("/") for w in done.stdout.splitlines() if w}
    assert done.returncode == 0 and done.stderr == "", done.stderr
    assert offered <= got and not (not_offered & got), (line, sorted(got))


def test_bash_completes_a_value_written_after_an_equals_sign(files, tmp_path):
    """bash splits --lang=z into --lang, =, z (COMP_WORDBREAKS)."""
    script = _script("bash", tmp_path)
    for words, cword, want in ((["kata", "check", "--lang", "=", "z"], 4, ["zh"]),
                               (["kata", "check", "--format", "="], 3, ["text", "json", "problems"])):
        command = (f"source {script}; COMP_WORDS=({_bash_words(words)}); COMP_CWORD={cword}; _kata; "
                   "printf '%s\\n' \"${COMPREPLY[@]}\"")
        done = subprocess.run(["bash", "--norc", "-c", command], cwd=files, capture_output=True, text=True, timeout=30)
        assert done.stdout.split() == want, (words, done.stdout, done.stderr)


# ----------------------------------------------------------------------------- completion: zsh

ZSH = shutil.which("zsh")
needs_zsh = pytest.mark.skipif(ZSH is None, reason="zsh is not installed (apt-get install zsh; macOS has it)")

# An interactive zsh in a pseudo-terminal, as a user's: only the eval line of the README (no compinit of its
# own), Tab bound to completion, and compadd replaced by one that prints what would be offered between marks.
ZSH_SETUP = r"""
PROMPT= RPROMPT=
{load}
bindkey '^I' complete-word
zstyle ':completion:*' insert-tab false
__kata_mark() {{ print -r -- '<<kata>>' }}
compprefuncs=( __kata_mark )
comppostfuncs=( __kata_mark exit )
compadd() {{
    if [[ ${{@[1,(i)(-|--)]}} == *-(O|A|D)\ * ]]; then builtin compadd "$@"; return; fi
    local -a __hits
    builtin compadd -A __hits "$@"
    (( $#__hits )) && print -rl -- $__hits
    builtin compadd "$@"  # offered for real: _files tries all files only where its patterns matched nothing
}}
print -r -- '<<ready>>'
"""
ZSH_DRIVE = r"""
zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "source ${(q)1}"
zpty -r z line '*<<ready>>*' || exit 4
zpty -w z "$2"$'\t'
while zpty -r z line; do print -rn -- $line; done
"""


def _zsh_env(tmp_path):
    home = tmp_path / "zhome"
    home.mkdir(exist_ok=True)
    return {"HOME": str(home), "ZDOTDIR": str(home), "PATH": "/usr/bin:/bin", "TERM": "xterm", "LANG": "C.UTF-8"}


def _zsh_offers(script: Path, typed: str, cwd: Path, tmp_path: Path, load: str = 'eval "$(<{script})"') -> set[str]:
    setup, drive = tmp_path / "setup.zsh", tmp_path / "drive.zsh"
    setup.write_text(ZSH_SETUP.format(load=load.format(script=script)), encoding="utf-8")
    drive.write_text(ZSH_DRIVE, encoding="utf-8")
    done = subprocess.run([ZSH, "-f", str(drive), str(setup), typed], cwd=cwd, env=_zsh_env(tmp_path),
                          capture_output=True, text=True, timeout=60)
    out = done.stdout.replace("\r", "")
    assert out.count("<<kata>>") >= 2, f"zsh completed nothing for {typed!r}:\n{out}\n{done.stderr}"
    between = out.split("<<kata>>")[1]
    return {w.rstrip("/").replace("\\ ", " ") for w in between.splitlines() if w.strip()}  # my\ stuff


@needs_zsh
def test_zsh_eval_without_compinit_prints_nothing_and_registers_kata(tmp_path):
    """macOS's zsh runs no compinit: the script runs it itself, so that compdef exists."""
    script = _script("zsh", tmp_path)
    check = f'eval "$(<{script})"; print -r -- "comps=${{_comps[kata]}}"'
    done = subprocess.run([ZSH, "-f", "-c", check], env=_zsh_env(tmp_path), capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stderr == "", done.stderr  # was: complete:13: command not found: compdef
    assert done.stdout.strip() == "comps=_kata", done.stdout
    after_users = f'autoload -Uz compinit && compinit -i; eval "$(<{script})"; print -r -- "${{_comps[kata]}}"'
    done = subprocess.run([ZSH, "-f", "-c", after_users], env=_zsh_env(tmp_path), capture_output=True, text=True,
                          timeout=60)
    assert done.stderr == "" and done.stdout.strip() == "_kata", done.stderr


@needs_zsh
@pytest.mark.parametrize("line, offered, not_offered", LINES, ids=IDS)
def test_zsh_completes_commands_option_values_katas_and_paths(line, offered, not_offered, files, tmp_path):
    got = _zsh_offers(_script("zsh", tmp_path), " ".join(line), files, tmp_path)
    base = lambda words: {w.rsplit("/", 1)[-1] for w in words}  # zsh offers a file by its name, the folder apart
    assert base(offered) <= base(got) and not (base(not_offered) & base(got)), (line, sorted(got))


@needs_zsh
def test_zsh_completes_from_fpath_too(files, tmp_path):
    """Saved as _kata in a folder of $fpath, then the user's own compinit."""
    folder = tmp_path / "functions"
    folder.mkdir()
    shutil.copy(_script("zsh", tmp_path), folder / "_kata")
    load = f"fpath=({folder} $fpath); autoload -Uz compinit && compinit -i -D"
    assert {"en", "zh"} <= _zsh_offers(folder / "_kata", "kata check --lang ", files, tmp_path, load=load)
    assert {"check"} <= _zsh_offers(folder / "_kata", "kata che", files, tmp_path, load=load)


# ----------------------------------------------------------------------------- completion: fish

FISH = shutil.which("fish")


@pytest.mark.skipif(FISH is None, reason="fish is not installed (apt-get install fish)")
@pytest.mark.parametrize("line, offered, not_offered", LINES, ids=IDS)
def test_fish_completes_commands_option_values_katas_and_paths(line, offered, not_offered, files, tmp_path):
    script = _script("fish", tmp_path)
    typed = " ".join(line).replace("'", "\\'")
    done = subprocess.run([FISH, "--no-config", "-c", f"source {script}; complete -C '{typed}'"], cwd=files,
                          env={**_zsh_env(tmp_path), "XDG_CONFIG_HOME": str(tmp_path / "fishconfig")},
                          capture_output=True, text=True, timeout=60)
    assert done.stderr == "", done.stderr
    got = {row.split("\t")[0].rstrip("/") for row in done.stdout.splitlines() if row}
    not_offered = not_offered - {"torch/notes.txt"}  # fish offers every file after kata check, as it does elsewhere
    assert offered <= got and not (not_offered & got), (line, sorted(got))


# ----------------------------------------------------------------------------- the wheel

DEBRIS_DIRS = {".ipynb_checkpoints", "__pycache__"}


def _debris(path: Path) -> bool:
    name = path.name
    return (bool(DEBRIS_DIRS & set(path.parts)) or name == ".DS_Store" or name.endswith(("~", ".pyc", ".swp"))
            or name.startswith(".#") or (name.startswith("#") and name.endswith("#")))


def test_the_wheel_holds_exactly_the_packages_files_and_no_editor_or_notebook_debris(tmp_path):
    """Built from a copy of the project (without its .gitignore: pyproject.toml alone decides) where a notebook,
    editors, Python and Finder have left their files under katas/, solutions/ and the package."""
    source = tmp_path / "project"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "LICENSE"):
        shutil.copy(ROOT / name, source / name)
    for folder in ("checker", "katas", "solutions"):
        shutil.copytree(ROOT / folder, source / folder, ignore=shutil.ignore_patterns("_katas", "_solutions"))
    strays = ["katas/torch/.ipynb_checkpoints/attention-checkpoint.py",
              "solutions/numpy/__pycache__/softmax.cpython-311.pyc", "katas/.DS_Store", "katas/torch/attention.py~",
              "katas/torch/.attention.py.swp", "solutions/torch/#attention.py#",
              "checker/.ipynb_checkpoints/cli-checkpoint.py", "checker/checks/torch_attention/statement.md~",
              "checker/__pycache__/cli.cpython-311.pyc"]
    for stray in strays:
        (source / stray).parent.mkdir(parents=True, exist_ok=True)
        (source / stray).write_text("debris\n", encoding="utf-8")
    hatchling = importlib.util.find_spec("hatchling") is not None
    out = tmp_path / "dist"
    command = [sys.executable, "-m", "pip", "wheel", str(source), "--no-deps", "-q", "-w", str(out)]
    done = subprocess.run(command + (["--no-build-isolation"] if hatchling else []), capture_output=True, text=True,
                          timeout=600)
    if done.returncode and not hatchling:
        pytest.skip(f"hatchling is not installed here and pip could not fetch it: {done.stderr.strip()[-300:]}")
    assert done.returncode == 0, done.stderr
    (wheel,) = out.glob("*.whl")
    names = {n for n in zipfile.ZipFile(wheel).namelist() if ".dist-info/" not in n}

    expected = set()
    for folder, inside in (("checker", "checker"), ("katas", "checker/_katas"), ("solutions", "checker/_solutions")):
        for path in (source / folder).rglob("*"):
            relative = path.relative_to(source / folder)
            if path.is_file() and not _debris(path) and not (folder == "checker" and relative.parts[0] == "checks" and (
                    "variants" in relative.parts or relative.name == "test_reference.py")):
                expected.add(f"{inside}/{relative.as_posix()}")
    assert not [n for n in names if _debris(Path(n))], sorted(n for n in names if _debris(Path(n)))
    assert names == expected, (sorted(names - expected)[:20], sorted(expected - names)[:20])
    assert {"checker/_katas/torch/attention.py", "checker/_solutions/numpy/softmax.py", "checker/app/cli.py",
            "checker/zh.toml", "checker/checks/torch_attention/statement.zh.md"} <= names

    installed = tmp_path / "installed"
    zipfile.ZipFile(wheel).extractall(installed)
    where = subprocess.run([sys.executable, "-c", "import sys; sys.path.insert(0, sys.argv[1]); from checker import "
                            "catalogue; print(catalogue.KATAS, catalogue.SOLUTIONS)", str(installed)],
                           capture_output=True, text=True, timeout=60)
    assert where.stdout.split() == [str(installed / "checker" / "_katas"), str(installed / "checker" / "_solutions")], \
        where.stdout + where.stderr


@pytest.mark.skipif(importlib.util.find_spec("hatchling") is None, reason="hatchling is not installed here")
def test_an_editable_install_still_runs_from_the_clone(tmp_path):
    """`sources` moves katas/ into the package, which hatchling's editable detection refuses: dev-mode-dirs puts the
    clone itself on the path, where catalogue.py finds katas/ and solutions/ beside the package."""
    done = subprocess.run([sys.executable, "-c", "import sys; from hatchling.build import build_editable; "
                           "print(build_editable(sys.argv[1]))", str(tmp_path)], cwd=ROOT, capture_output=True,
                          text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    with zipfile.ZipFile(tmp_path / done.stdout.strip().splitlines()[-1]) as wheel:
        (pth,) = [n for n in wheel.namelist() if n.endswith(".pth")]
        assert wheel.read(pth).decode().strip() == str(ROOT)
        assert not [n for n in wheel.namelist() if n.startswith("checker/")]
