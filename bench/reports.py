"""The reports a learner reads for one mistake (issue 26): how long each wrong variant's report is at 80 columns,
in Chinese and in English, and which ASCII words a Chinese report holds that are not code, a name or a number.

    python bench/reports.py [--shard I/N] [--width 80] [--out DIR] [--only TEXT]

Each wrong variant (checker/checks/TRACK_NAME/variants/wrong_*.py) is checked once, while Chinese is spoken, and
its report drawn as `kata check` draws it, in both languages. Printed: the reports over 40 lines (the bound of
tests/checks/test_variants.py, report_reading.held_to_40_lines), the longest, and every English word of a Chinese report with the file it
came from (the rule is tests/commands/test_chinese_reports.py's). --out keeps every report as text, to read.
All 806 variants take about 8 minutes on one core; --shard splits them over several processes (two: 4 to 5
minutes on two cores).
"""

import argparse
import sys
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]

from conftest import variant_files  # noqa: E402
from report_reading import english_in, kata_of, rendered  # noqa: E402  # one rule for the tests and this script

from checker import engine  # noqa: E402
from checker.lang import speaking  # noqa: E402

BOUND = 40


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shard", default="0/1", help="I/N: only every N-th variant, from the I-th")
    parser.add_argument("--width", type=int, default=80)
    parser.add_argument("--out", type=Path, default=None, help="a folder for the reports, one file per variant")
    parser.add_argument("--only", default="", help="only the variants whose path contains this")
    args = parser.parse_args()
    index, count = map(int, args.shard.split("/"))
    files = [p for p in variant_files("wrong") if args.only in str(p)][index::count]
    lengths, words = [], Counter()
    for path in files:
        name = f"{path.parent.parent.name}/{path.stem}"
        with speaking("zh"):
            result = engine.check_file(kata_of(path), path)
        texts = rendered(result, width=args.width)
        for lang, text in texts.items():
            lengths.append((len(text.splitlines()), lang, name))
            if args.out:
                target = args.out / lang / f"{name}.txt"
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(text, encoding="utf-8")
        found = english_in(texts["zh"], kata_of(path), path.read_text(encoding="utf-8"))
        for word, sentence in found:
            print(f"english\t{word}\t{name}\t{sentence}")
        words.update(word for word, _ in found)
        print(f"lines\t{len(texts['zh'].splitlines())}\t{len(texts['en'].splitlines())}\t{name}", flush=True)
    over = sorted((n, lang, name) for n, lang, name in lengths if n > BOUND)
    print(f"\n{len(files)} wrong variants, {len(over)} report(s) over {BOUND} lines at {args.width} columns")
    for n, lang, name in over:
        print(f"  {n:4}  {lang}  {name}")
    if lengths:
        n, lang, name = max(lengths)
        print(f"longest: {n} lines ({lang}, {name})")
    print(f"English words in Chinese reports: {sum(words.values())} ({len(words)} distinct)")
    for word, n in words.most_common():
        print(f"  {n:4}  {word}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
