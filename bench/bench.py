"""Speed figures for kata, each printed as a ratio against a baseline measured in the same run.

    python bench/bench.py            # all figures
    python bench/bench.py --quick    # fewer repetitions

Machines here are shared and noisy, so every figure is the median of several runs, and each
ratio compares two things measured back to back on the same machine. The bounds are the targets
from the project's issues; the script prints them beside the figures and exits 1 if one is missed.
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PY = sys.executable


def wall(cmd: list[str], runs: int, env=None) -> float:
    """Median wall time of a command, in seconds, after one untimed run (warm caches)."""
    subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=env, check=False)
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def report(name: str, value: str, ratio: float | None, bound: float | None, unit: str = "×") -> bool:
    ok = bound is None or (ratio is not None and ratio <= bound)
    shown = f"{ratio:.2f}{unit}" if ratio is not None else "–"
    limit = f"(bound {bound:g}{unit})" if bound is not None else ""
    print(f"{'ok ' if ok else 'MISS'} {name:58} {value:26} {shown:>8} {limit}")
    return ok


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--quick", action="store_true")
    args = parser.parse_args()
    runs = 3 if args.quick else 7
    # As on a user's machine: Python may cache bytecode (some sandboxes turn that off, which
    # would charge every run for recompiling kata's own modules).
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["NO_COLOR"] = "1"
    env["KATA_NO_SERVER"] = "1"  # cold figures: no resident checker starts (the warm ones below unset it)
    ws = Path(tempfile.mkdtemp()) / "ws"
    subprocess.run([PY, "-m", "checker", "init", str(ws)], stdout=subprocess.DEVNULL, check=True)
    env["KATA_WORKSPACE"] = str(ws)
    results = []

    rich_base = wall([PY, "-c", "import rich.console"], runs, env)
    for what in (["list"], ["show", "attention"], ["hint", "attention"], ["--help"]):
        t = wall([PY, "-m", "checker", *what], runs, env)
        results.append(report(f"kata {' '.join(what)} vs import rich.console", f"{t:.3f} s vs {rich_base:.3f} s",
                              t / rich_base, 2.0))

    torch_base = wall([PY, "-c", "import torch"], runs, env)
    shutil.copy(ROOT / "solutions" / "torch" / "attention.py", ws / "torch" / "attention.py")
    t = wall([PY, "-m", "checker", "check", "attention"], runs, env)
    results.append(report("cold kata check attention vs import torch", f"{t:.3f} s vs {torch_base:.3f} s",
                          t / torch_base, 1.25))
    # A file that makes a tensor itself (here its scale) also runs on the meta device, whose kernels the
    # child imports while the other checks run (about 0.3 s: torch._dynamo left out, checker.sandbox.meta_kernels).
    solution = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")
    (ws / "torch" / "attention.py").write_text(solution.replace(
        "math.sqrt(d_k)", "torch.tensor(d_k, dtype=Q.dtype, device=Q.device).sqrt()"), encoding="utf-8")
    t = wall([PY, "-m", "checker", "check", "attention"], runs, env)
    results.append(report("  the same, a file that makes a tensor (meta-device run)", f"{t:.3f} s vs {torch_base:.3f} s",
                          t / torch_base, 1.3))
    results += _warm_checks(ws, env, runs, t)
    shutil.copy(ROOT / "solutions" / "torch" / "attention.py", ws / "torch" / "attention.py")
    # Windows' start method: a fresh interpreter imports torch for the child, started ahead, in parallel.
    t = wall([PY, "-m", "checker", "check", "attention"], runs, {**env, "KATA_SANDBOX": "spawn"})
    results.append(report("cold check under spawn vs import torch", f"{t:.3f} s vs {torch_base:.3f} s",
                          t / torch_base, 1.5))

    # A re-check as a watch or drill worker does it: torch already imported, one fork per check.
    sys.path.insert(0, str(ROOT))
    from checker import catalogue, engine

    kata = catalogue.find("attention")
    engine.check_file(kata, ws / "torch" / "attention.py")  # warm: check module and reference imported
    recheck = statistics.median(
        _timed(lambda: engine.check_file(kata, ws / "torch" / "attention.py")) for _ in range(runs))
    results.append(report("re-check of attention in a warm process (bound 0.3 s)", f"{recheck:.3f} s",
                          recheck / 0.3, 1.0, unit=" of 0.3 s"))
    # macOS's start method: each child forked from a server that preloaded torch, one kept ready ahead.
    from checker.sandbox import processes

    os.environ["KATA_SANDBOX"] = "forkserver"
    processes.prestart(keep=True)
    engine.check_file(kata, ws / "torch" / "attention.py")  # the server started, torch imported there
    recheck = statistics.median(
        _timed(lambda: engine.check_file(kata, ws / "torch" / "attention.py")) for _ in range(runs))
    del os.environ["KATA_SANDBOX"]
    results.append(report("re-check under forkserver in a warm process (bound 0.3 s)", f"{recheck:.3f} s",
                          recheck / 0.3, 1.0, unit=" of 0.3 s"))

    start = time.perf_counter()
    subprocess.run([PY, "-m", "checker", "check", "--all", "--solution", "--json", "-j", "1"],
                   stdout=subprocess.DEVNULL, env=env, check=False)
    everything = time.perf_counter() - start
    from checker import catalogue

    count = len(catalogue.all_katas())
    per_kata = everything / count  # the catalogue grows: the bound is per kata (30 s for 42 katas before)
    results.append(report(f"kata check --all --solution -j 1, {count} katas (bound 0.7 s each)",
                          f"{everything:.1f} s, {per_kata:.2f} s each", per_kata / 0.7, 1.0, unit=" of 0.7 s"))
    # On two cores: two workers, each with its own sandbox, right after the run on one (the same load).
    start = time.perf_counter()
    subprocess.run([PY, "-m", "checker", "check", "--all", "--solution", "--json", "-j", "2"],
                   stdout=subprocess.DEVNULL, env=env, check=False)
    two = time.perf_counter() - start
    results.append(report("  the same with -j 2 vs -j 1", f"{two:.1f} s vs {everything:.1f} s", two / everything, 0.65))
    # Windows' start method over the whole catalogue: a child that comes back clean serves the next kata.
    start = time.perf_counter()
    subprocess.run([PY, "-m", "checker", "check", "--all", "--solution", "--json", "-j", "1"],
                   stdout=subprocess.DEVNULL, env={**env, "KATA_SANDBOX": "spawn"}, check=False)
    spawned = time.perf_counter() - start
    results.append(report("  the same under spawn vs under fork", f"{spawned:.1f} s vs {everything:.1f} s",
                          spawned / everything, 1.5))

    results.append(_mha_speed(runs))
    results += _error_model_search()
    return 0 if all(results) else 1


def _warm_checks(ws: Path, env: dict, runs: int, cold: float) -> list[bool]:
    """The workspace's resident checker (checker.warm): `kata check` and `--format problems` of the file that makes a
    tensor, handed to the server, against the cold check of the same file; the notebook's check() warm and cold."""
    warm_env = {**env, "KATA_NO_SERVER": ""}
    subprocess.run([PY, "-m", "checker", "server", "start"], stdout=subprocess.DEVNULL, env=warm_env, check=True)
    found = []
    try:
        for what in ([], ["--format", "problems"]):
            t = wall([PY, "-m", "checker", "check", "attention", *what], runs, warm_env)
            name = "warm kata check" + (" --format problems" if what else "") + " vs cold, the same file"
            found.append(report(name, f"{t:.3f} s vs {cold:.3f} s", t / cold, 0.25))
            found.append(report("  the same in seconds (bound 0.35 s)", f"{t:.3f} s", t / 0.35, 1.0, unit=" of 0.35 s"))
        source = (ws / "torch" / "attention.py").read_text(encoding="utf-8")
        found += _notebook_checks(ws, source, runs)
    finally:
        subprocess.run([PY, "-m", "checker", "server", "stop"], stdout=subprocess.DEVNULL, env=warm_env, check=False)
    return found


def _notebook_checks(ws: Path, source: str, runs: int) -> list[bool]:
    """The notebook's check() on the same code, by the server and by a `kata check` of its own (--no-server)."""
    sys.path.insert(0, str(ROOT))
    from checker.notebook import check

    times = {}
    for mode, no_server in (("cold", "1"), ("warm", "")):
        os.environ["KATA_NO_SERVER"] = no_server
        check("attention", source=source, workspace=ws)  # as wall(): one run first, untimed
        times[mode] = statistics.median(
            _timed(lambda: check("attention", source=source, workspace=ws)) for _ in range(runs))
    os.environ["KATA_NO_SERVER"] = "1"
    warm, cold = times["warm"], times["cold"]
    return [report("notebook check() warm vs cold, the same code", f"{warm:.3f} s vs {cold:.3f} s", warm / cold, 0.25),
            report("  the same in seconds (bound 0.35 s)", f"{warm:.3f} s", warm / 0.35, 1.0, unit=" of 0.35 s")]


def _error_model_search() -> list[bool]:
    """The error model's search on outputs no rewrite gives (every single rewrite, then the pairs, are tried), in
    seconds of CPU against its budget: 1 s for a kata of one part, 3 s for a composite (issue 35)."""
    import numpy as np

    from checker import catalogue
    from checker.engine import load_solution
    from checker.kit import errormodel
    from checker.kit.compare import as_outputs
    from checker.kit.proxy import Kit, _all_match

    found = []
    for name, bound in (("layer_norm", 1.0), ("attention", 1.0), ("numpy/multi_head_attention", 1.0),
                        ("decoder_layer", 3.0), ("transformer", 3.0)):
        kata = catalogue.find(name)
        spec = __import__(kata.checks_module, fromlist=["CASES"])
        solution = load_solution(kata)
        kit = Kit(spec, None, solution)
        tol = kit.tolerance("float64")
        cases = list(spec.CASES)

        def run(module, c, kit=kit, spec=spec):
            impl = getattr(module, spec.TARGET)
            return as_outputs(kit.reference(kit.inputs(c), case=c, impl=impl), spec.OUTPUTS)

        with np.errstate(all="ignore"):
            got = {c.id: tuple(o * 1.01 + 0.3 for o in as_outputs(kit.reference(kit.inputs(c), case=c), spec.OUTPUTS))
                   for c in cases}
        errormodel._parsed(solution.__file__)  # parsed once per process, as in a check
        start = time.process_time()
        errormodel.search(solution, run, cases, got, lambda a, b, tol=tol: _all_match(a, b, tol), bound)
        spent = time.process_time() - start
        count = len(errormodel._parsed(solution.__file__))
        found.append(report(f"error model: search of {name} ({count} rewrites, CPU s)", f"{spent:.2f} s",
                            spent / bound, 1.05, unit=f" of {bound:g} s"))
    return found


def _timed(fn) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _mha_speed(runs: int) -> bool:
    """The multi-head attention reference against nn.MultiheadAttention's forward, B=8, T=256, D=512."""
    import torch

    from checker import catalogue
    from checker.engine import load_solution

    torch.manual_seed(0)
    B, T, D, H = 8, 256, 512, 8
    ours = load_solution(catalogue.find("multi_head_attention")).MultiHeadAttention(D, H).eval()
    theirs = torch.nn.MultiheadAttention(D, H, batch_first=True).eval()
    x = torch.randn(B, T, D)
    with torch.no_grad():
        for _ in range(2):  # warm up both
            ours(x, x)
            theirs(x, x, x, need_weights=True, average_attn_weights=False)
        t_ours = statistics.median(_timed(lambda: ours(x, x)) for _ in range(runs))
        t_theirs = statistics.median(
            _timed(lambda: theirs(x, x, x, need_weights=True, average_attn_weights=False)) for _ in range(runs))
    return report("MultiHeadAttention reference vs nn.MultiheadAttention", f"{t_ours * 1e3:.1f} ms vs "
                  f"{t_theirs * 1e3:.1f} ms", t_ours / t_theirs, 1.5)


if __name__ == "__main__":
    sys.exit(main())
