#!/usr/bin/env bash
# The prepared run on a lent GPU machine (a CUDA build of torch), one call of the device tool:
#   here:  python3 -m pip download --no-deps --only-binary=:all: --python-version 3.12 ... -d .whl platformdirs watchfiles
#   there: bash bench/gpu.sh        (carry .whl; $OUT collects one log and the JSON verdicts)
# Each step has its own time limit, so that one that hangs still leaves the others' results.
set -uo pipefail
OUT=${OUT:-/tmp/gpu-out}; mkdir -p "$OUT"
LOG=$OUT/log
exec > >(tee "$LOG") 2>&1
export PYTHONUNBUFFERED=1 NO_COLOR=1 COLUMNS=100
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl || exit 1
export PYTHONPATH=/tmp/site:$PWD
step() { echo; echo "=== $1 ($(date +%T))"; }

step versions
nvidia-smi -L
python3 -c "import torch, numpy, sys; print(sys.version.split()[0], torch.__version__, torch.version.cuda, torch.cuda.is_available(), numpy.__version__)"

step "fresh stub and reference"
ws=$(mktemp -d)/ws
python3 -m checker init "$ws" >/dev/null
python3 -m checker check attention --workspace "$ws" >/dev/null; echo "stub exit $? (expected 1)"
python3 -m checker check attention --solution >/dev/null; echo "solution exit $? (expected 0)"

for method in default; do
  step "every reference, sandbox $method"
  env=(); [ "$method" != default ] && env=(KATA_SANDBOX=$method)
  SECONDS=0
  env "${env[@]}" timeout 120 python3 -m checker check --all --solution --json > "$OUT/all_$method.json"
  echo "exit $? in $SECONDS s"
  python3 - "$OUT/all_$method.json" <<'EOF'
import json, sys
data = json.load(open(sys.argv[1]))
results = data["katas"]
bad = [(r["name"], r["status"], str(r.get("error"))[:200]) for r in results if r["status"] != "pass"]
print(f"{len(results) - len(bad)}/{len(results)} passed", bad)
EOF
done

step "a user's file that moves its tensors to the GPU (the sandbox shows it none)"
cp checker/checks/torch_attention/variants/wrong_moves_to_cuda.py "$ws/torch/attention.py"
timeout 60 python3 -m checker check attention --workspace "$ws" --json | python3 -c "import json, sys; k = json.load(sys.stdin)['katas'][0]; print(k['status'], k['diagnosis'], k['error'][-200:], sep='\n')"

step "tests: sandbox"
timeout 180 python3 -m pytest -n 16 -p no:cacheprovider -q -rfE --tb=short --timeout 90 tests/sandbox
step "tests: variants"
timeout 120 python3 -m pytest -n 16 -p no:cacheprovider -q -rfE --tb=short --timeout 90 tests/checks/test_variants.py
step "tests: commands (no terminal, no notebook)"
timeout 120 python3 -m pytest -n 16 -p no:cacheprovider -q -rfE --tb=short --timeout 90 tests/commands \
  --ignore tests/commands/test_live.py --ignore tests/commands/test_notebook.py
step done
