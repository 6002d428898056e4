"""Shared fixtures: the repository's folders and a runner for the real `kata` command."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
VARIANTS = ROOT / "tests" / "variants"


def run_kata(*args, cwd=None, env=None, input=None, timeout=300):
    """Run the real CLI in a subprocess, as a user would."""
    full_env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "120", **(env or {})}
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
