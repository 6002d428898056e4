#!/usr/bin/env bash
# Set up kata in this clone and run its main job once (Linux, WSL, macOS): the README's first command.
#
#   1. a virtual environment in .venv (Python 3.11 or newer: $PYTHON, else python3);
#   2. torch's CPU build first (so that pip never downloads the multi-gigabyte CUDA build), then kata with its
#      test extras, editable: pip install -e ".[test]", and its Python byte-compiled (compileall);
#   3. kata check attention --solution: the reference through the hidden checks, a green report;
#   4. a fresh workspace ws/ (kata init ws) and its stub checked: not started yet, exit status 1, which is what
#      a stub must give. Open ws/torch/attention.py, write the body, run `kata check attention` in ws/.
#
# KATA_TORCH says where torch comes from, as pip's arguments. Default: the CPU index on Linux and WSL, PyPI on
# macOS (whose torch has no CUDA). Behind a slow connection: PIP_INDEX_URL=https://pypi.tuna.tsinghua.edu.cn/simple.
# Run it again at any time: the environment is updated, your files in ws/ are left alone.
set -euo pipefail
cd "$(dirname "$0")/.."

say() { printf '%s\n%s\n' "$1" "$2" >&2; }  # English, then Chinese

python=${PYTHON:-python3}
if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null; then
    say "kata needs Python 3.11 or newer; $python is $("$python" -V 2>&1). Run PYTHON=python3.12 bash scripts/setup.sh" \
        "kata 需要 Python 3.11 或更新的版本；$python 是 $("$python" -V 2>&1)。请运行 PYTHON=python3.12 bash scripts/setup.sh"
    exit 2
fi
"$python" -m venv .venv
. .venv/bin/activate

if [ -z "${KATA_TORCH:-}" ]; then
    if [ "$(uname -s)" = Darwin ]; then KATA_TORCH="torch"; else KATA_TORCH="torch --index-url https://download.pytorch.org/whl/cpu"; fi
fi
# shellcheck disable=SC2086  # KATA_TORCH is a list of pip's arguments
python -m pip install $KATA_TORCH
python -m pip install -e ".[test]"
# pip byte-compiles what it installs, but not an editable project: done once here, every kata command starts about
# 0.1 s sooner where Python writes no bytecode of its own (PYTHONDONTWRITEBYTECODE, read-only folders).
python -m compileall -q -x '/variants/' checker solutions >/dev/null

kata check attention --solution

new=0; [ -e ws ] || new=1
kata init ws
set +e; kata check attention --workspace ws; status=$?; set -e
if [ "$new" = 1 ] && [ "$status" != 1 ]; then
    say "a fresh stub should give exit status 1 (not started), and gave $status" \
        "新的空白模板应当给出退出状态 1（未开始），实际是 $status"
    exit 1
fi
if [ "$status" -gt 1 ]; then exit "$status"; fi
say "Ready. Activate the environment with . .venv/bin/activate, then edit ws/torch/attention.py and run kata check attention --workspace ws" \
    "准备好了。用 . .venv/bin/activate 激活环境，然后编辑 ws/torch/attention.py，再运行 kata check attention --workspace ws"
