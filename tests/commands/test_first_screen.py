"""The README's first screen: two commands per system, one that sets up and runs the main job, one that runs the
tests; CI (.ci/run) runs the same lines word for word (its one difference, where torch comes from, is an
environment variable the script reads)."""

import re
import subprocess

from conftest import ROOT

FIRST_SCREEN = 50  # lines: what a reader sees before scrolling, give or take a terminal


def _blocks(text: str, language: str) -> list[list[str]]:
    return [block.strip().splitlines() for block in re.findall(rf"```{language}\n(.*?)```", text, re.DOTALL)]


def test_the_readme_opens_with_two_commands_for_each_system():
    first = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])
    posix, windows = _blocks(first, "bash"), _blocks(first, "powershell")
    assert len(posix) == 1 and len(windows) == 1, "one block for Linux and macOS, one for Windows"
    assert posix[0] == ["bash scripts/setup.sh", ".venv/bin/python -m pytest -n auto --durations=30"]
    assert windows[0] == [r"powershell -ExecutionPolicy Bypass -File scripts\setup.ps1",
                          r".venv\Scripts\python -m pytest -n auto --durations=30"]
    assert "pipx" not in first and "WSL, keep the workspace" not in first, "the rest of the set-up comes after"


def test_ci_runs_the_readmes_lines_word_for_word():
    first = "\n".join((ROOT / "README.md").read_text(encoding="utf-8").splitlines()[:FIRST_SCREEN])
    ci = (ROOT / ".ci" / "run").read_text(encoding="utf-8").splitlines()
    for line in _blocks(first, "bash")[0]:
        assert line in ci, f".ci/run does not run {line!r} as the README writes it"
    assert 'export KATA_TORCH="torch==2.13.0"' in ci, "the one difference, said in .ci/run"
    assert any("numpy==2.0.2" in line for line in ci)


def test_the_setup_scripts_do_the_same_steps():
    sh = (ROOT / "scripts" / "setup.sh").read_text(encoding="utf-8")
    ps1 = (ROOT / "scripts" / "setup.ps1").read_text(encoding="utf-8-sig")
    assert subprocess.run(["bash", "-n", ROOT / "scripts" / "setup.sh"]).returncode == 0
    for step in ("-m venv .venv", "KATA_TORCH", "https://download.pytorch.org/whl/cpu", 'pip install -e ".[test]"',
                 "check attention --solution", "init ws", "check attention --workspace ws", "3, 11"):
        assert step in sh and step in ps1, step
    assert (ROOT / "scripts" / "setup.ps1").read_bytes().startswith(b"\xef\xbb\xbf"), \
        "Windows PowerShell 5.1 reads a script without a byte order mark in the ANSI code page"
