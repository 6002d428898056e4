"""Shared fixtures: the repository's folders and a runner for the real `kata` command."""

import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ROOT / "tests" / "variants"


# A private data folder for the whole test session: a test that falls back to the default
# workspace must never touch the real one in the user's home.
_DATA_HOME = tempfile.mkdtemp(prefix="kata-tests-data-")


def run_kata(*args, cwd=None, env=None, input=None, timeout=300):
    """Run the real CLI in a subprocess, as a user would."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", "XDG_DATA_HOME": _DATA_HOME,
                "KATA_WORKSPACE": "", **(env or {})}
    return subprocess.run([sys.executable, "-m", "checker", *map(str, args)], cwd=cwd, env=full_env,
                          input=input, capture_output=True, text=True, timeout=timeout)


def run_json(*args, **kw):
    proc = run_kata(*args, "--json", **kw)
    assert proc.stdout.strip(), proc.stderr
    return proc, json.loads(proc.stdout)


@pytest.fixture
def workspace(tmp_path):
    ws = tmp_path / "ws"
    proc = run_kata("init", ws)
    assert proc.returncode == 0, proc.stderr
    return ws


def pytest_terminal_summary(terminalreporter):
    _diagnosis_rates(terminalreporter)
    _kill_rates(terminalreporter)


def _diagnosis_rates(terminalreporter):
    """Per kata, the share of wrong variants diagnosed and named (filled by tests/test_variants.py)."""
    try:
        from test_variants import FIGURES
    except ImportError:
        return
    if not FIGURES:
        return
    terminalreporter.section("wrong variants: diagnosed, pointed")
    terminalreporter.write_line(f"{'kata':32} {'n':>4} {'diagnosed':>11} {'pointed':>11}")
    for kata, (n, d, p) in sorted(FIGURES.items()):
        terminalreporter.write_line(f"{kata:32} {n:4} {d:4} {100 * d / n:5.1f}% {p:4} {100 * p / n:5.1f}%")
    n, d, p = (sum(f[i] for f in FIGURES.values()) for i in range(3))
    terminalreporter.write_line(f"{'all':32} {n:4} {d:4} {100 * d / n:5.1f}% {p:4} {100 * p / n:5.1f}%")


def _kill_rates(terminalreporter):
    """Print the mutation kill rate per kata (filled by tests/test_mutation.py)."""
    try:
        from test_mutation import KILL_RATES
    except ImportError:
        return
    if not KILL_RATES:
        return
    terminalreporter.section("mutation kill rate")
    killed = sum(k for k, _ in KILL_RATES.values())
    total = sum(t for _, t in KILL_RATES.values())
    for kata, (k, t) in KILL_RATES.items():
        terminalreporter.write_line(f"{kata:32} {k:4}/{t:<4} {100 * k / max(t, 1):5.1f}%")
    terminalreporter.write_line(f"{'all':32} {killed:4}/{total:<4} {100 * killed / max(total, 1):5.1f}%")
