# Set up kata in this clone and run its main job once (Windows, PowerShell): the README's first command,
#   powershell -ExecutionPolicy Bypass -File scripts\setup.ps1
#
#   1. a virtual environment in .venv (Python 3.11 or newer, through the py launcher; $env:PYTHON to choose one);
#   2. torch's CPU build first (so that pip never downloads the multi-gigabyte CUDA build), then kata with its
#      test extras, editable: pip install -e ".[test]";
#   3. kata check attention --solution: the reference through the hidden checks, a green report;
#   4. a fresh workspace ws\ (kata init ws) and its stub checked: not started yet, exit status 1, which is what a
#      stub must give. Open ws\torch\attention.py, write the body, run `kata check attention` in ws\.
#
# $env:KATA_TORCH says where torch comes from, as pip's arguments (default: the CPU index). Behind a slow
# connection: $env:PIP_INDEX_URL = "https://pypi.tuna.tsinghua.edu.cn/simple". Run it again at any time: the
# environment is updated, your files in ws\ are left alone.
# (Saved as UTF-8 with a byte order mark: Windows PowerShell 5.1 reads a script without one in the ANSI code page, which garbles the Chinese.)
$ErrorActionPreference = "Stop"
Set-Location (Join-Path $PSScriptRoot "..")

function Say($english, $chinese) { [Console]::Error.WriteLine($english); [Console]::Error.WriteLine($chinese) }
function Run {  # a native command: stop at its first failure (PowerShell does not, for an exit status)
    & $args[0] @($args | Select-Object -Skip 1)
    if ($LASTEXITCODE -ne 0) { exit $LASTEXITCODE }
}

$python = if ($env:PYTHON) { @($env:PYTHON) } else { @("py", "-3") }
& $python[0] @($python | Select-Object -Skip 1) -c "import sys; sys.exit(sys.version_info < (3, 11))"
if ($LASTEXITCODE -ne 0) {
    Say "kata needs Python 3.11 or newer: install it from python.org, or set `$env:PYTHON to one (py -3.12)" `
        "kata 需要 Python 3.11 或更新的版本：请从 python.org 安装，或者用 `$env:PYTHON 指定一个（py -3.12）"
    exit 2
}
Run @python -m venv .venv
$venv = Join-Path (Get-Location) ".venv\Scripts"
$torch = if ($env:KATA_TORCH) { $env:KATA_TORCH -split " " } else { @("torch", "--index-url", "https://download.pytorch.org/whl/cpu") }
Run "$venv\python.exe" -m pip install @torch
Run "$venv\python.exe" -m pip install -e ".[test]"
# pip byte-compiles what it installs, but not an editable project: done once here, every kata command starts sooner.
Run "$venv\python.exe" -m compileall -q -x "[\\/]variants[\\/]" checker solutions

Run "$venv\kata.exe" check attention --solution

$new = -not (Test-Path ws)
Run "$venv\kata.exe" init ws
& "$venv\kata.exe" check attention --workspace ws
$status = $LASTEXITCODE
if ($new -and $status -ne 1) {
    Say "a fresh stub should give exit status 1 (not started), and gave $status" `
        "新的空白模板应当给出退出状态 1（未开始），实际是 $status"
    exit 1
}
if ($status -gt 1) { exit $status }
Say "Ready. Activate the environment with .venv\Scripts\Activate.ps1, then edit ws\torch\attention.py and run kata check attention --workspace ws" `
    "准备好了。用 .venv\Scripts\Activate.ps1 激活环境，然后编辑 ws\torch\attention.py，再运行 kata check attention --workspace ws"
exit 0
