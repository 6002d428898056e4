"""The verdicts on a blind set: files written by people who never saw the checks (issue 25).

    python bench/blind.py FOLDER [--shard I/N] [--out FILE.tsv] [--error-model-only]

FOLDER holds one folder per kata, TRACK_NAME/ (as in checker/checks/), of files `wrong_*.py` (or `bug_*.py`) and
`right_*.py` (or `ok_*.py`), a wrong file with a `# mistake: ...` line near its top. --error-model-only switches the
katas' hand-written mistakes off, to measure what the error model (checker/kit/errormodel.py) names on its own;
every run counts the wrong files whose diagnosis came from the error model. The set stays outside the repository and outside the tests, so that no check is ever
tuned to one of its files. Printed: correct files that fail, wrong files that pass (with and without a
follow-up question), and the share of wrong files diagnosed and pointed, as tests/checks/test_variants.py
counts them on the project's own variants. The TSV has one row per file with the mistake it was written
with beside the diagnosis it got, for reading: a diagnosis that names another mistake is a misdiagnosis,
and only a person reading both can count those.
"""

import argparse
import csv
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "checks")]

from checker import catalogue, engine  # noqa: E402
from checker.app import report  # noqa: E402
from checker.kit import errormodel, proxy  # noqa: E402

_SAID: set = set()  # every sentence the error model said in this run
_explain = errormodel.explain


def _recorded(fits, **how):
    said = _explain(fits, **how)
    if said:
        _SAID.add(said)
    return said


errormodel.explain = _recorded
from test_variants import _report_text, is_pointed  # noqa: E402  # one definition of "pointed"


def _header(path: Path) -> dict:
    fields = {}
    for line in path.read_text(encoding="utf-8").splitlines()[:8]:
        if line.startswith("# ") and ":" in line:
            key, _, value = line[2:].partition(":")
            fields[key.strip()] = value.strip()
    return fields


def _kata(folder: Path):
    track, name = folder.name.split("_", 1)
    return catalogue.find(name if track == catalogue.DEFAULT_TRACK else f"{track}/{name}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folder", type=Path)
    parser.add_argument("--shard", default="0/1", help="I/N: only every N-th file, from the I-th")
    parser.add_argument("--out", type=Path, default=None, help="the TSV, one row per file")
    parser.add_argument("--error-model-only", action="store_true", help="the katas' named mistakes switched off")
    args = parser.parse_args()
    if args.error_model_only:
        import dataclasses

        options = proxy.options
        proxy.options = lambda spec: dataclasses.replace(options(spec), MISTAKES=[])
    index, count = map(int, args.shard.split("/"))
    files = sorted(p for p in args.folder.glob("*/*_*.py") if p.name.split("_")[0] in ("wrong", "right", "bug", "ok"))
    files = files[index::count]
    rows = []
    for path in files:
        kind = "right" if path.name.startswith(("right_", "ok_")) else "wrong"
        head = _header(path)
        try:
            checked = engine.check_file(_kata(path.parent), path, timed=False)
        except LookupError:
            print(f"skipped, no such kata: {path.parent.name}", file=sys.stderr)
            continue
        from_model = checked.diagnosis is not None and checked.diagnosis in _SAID  # messages, before they are drawn
        result = report.drawn(checked)
        followups = "; ".join(c.message for c in result.followups())
        rows.append({
            "file": f"{path.parent.name}/{path.name}", "kind": kind, "class": head.get("class", ""),
            "mistake": head.get("mistake", ""), "status": result.status,
            "diagnosed": int(kind == "wrong" and result.status != "pass" and bool(result.diagnosis)),
            "error_model": int(kind == "wrong" and result.status != "pass" and from_model),
            "pointed": int(kind == "wrong" and result.status != "pass" and is_pointed(result)),
            "diagnosis": (result.diagnosis or "").replace("\n", " ")[:400],
            "followups": followups.replace("\n", " ")[:400],
            "report": _report_text(result).replace("\n", " ")[:300] if result.status != "pass" else "",
        })
    if args.out:
        with args.out.open("w", encoding="utf-8", newline="") as f:
            writer = csv.DictWriter(f, fieldnames=list(rows[0]) if rows else ["file"], delimiter="\t")
            writer.writeheader()
            writer.writerows(rows)
    wrong = [r for r in rows if r["kind"] == "wrong"]
    right = [r for r in rows if r["kind"] == "right"]
    passed = [r for r in wrong if r["status"] == "pass"]
    print(f"right files: {len(right)}, failed: {sum(r['status'] != 'pass' for r in right)}")
    print(f"wrong files: {len(wrong)}, passed: {len(passed)} "
          f"(of which with a follow-up question: {sum(bool(r['followups']) for r in passed)})")
    if wrong:
        print(f"diagnosed: {sum(r['diagnosed'] for r in wrong)} ({sum(r['diagnosed'] for r in wrong) / len(wrong):.1%}), "
              f"pointed: {sum(r['pointed'] for r in wrong)} ({sum(r['pointed'] for r in wrong) / len(wrong):.1%}), "
              f"by the error model: {sum(r['error_model'] for r in wrong)} "
              f"({sum(r['error_model'] for r in wrong) / len(wrong):.1%})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
