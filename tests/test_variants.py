"""Realistic implementations, wrong and right, for every kata (tests/variants/TRACK_NAME/).

wrong_*.py must fail, and the report must contain the text on its first line `# expect: TEXT`.
right_*.py are correct implementations that differ from the reference; they must pass. One whose first
line is `# followup: TEXT` passes with an accepted variant or a follow-up question containing TEXT,
and fails under --strict.
"""

import re
from pathlib import Path

import pytest

from checker import catalogue, engine

VARIANTS = Path(__file__).resolve().parent / "variants"


def _kata(folder: Path):
    track, name = folder.name.split("_", 1)
    return catalogue.find(name if track == catalogue.DEFAULT_TRACK else f"{track}/{name}")


def _files(prefix: str):
    return sorted(VARIANTS.glob(f"*/{prefix}_*.py"), key=str)


def _report_text(result) -> str:
    return "\n".join([result.diagnosis or "", result.error] + [c.message for c in result.checks])


# A message that ends in the kit's value comparison, whatever labels come before it: "case 2 (B=2, ...): y: 7
# of 120 elements differ; largest difference 0.3 at index (0, 1, 2): got 0.1, expected 0.4". It says that
# numbers differ, not which mistake.
_VALUES_ONLY = re.compile(r"(?s).*\d+ of \d+ elements (?:differ|are NaN)(?:; (?:first at index|largest difference) "
                          r".*?got \S+, expected \S+|; first at index \(.*?\))?")


def is_pointed(result) -> bool:
    """A report names the mistake when it has a diagnosis, or when the user's code raised (the report
    shows the error and its line), or when some failing check says more than "N of M elements differ"."""
    failed = [c.message for c in result.checks if not c.passed and c.kind == "core"]
    return bool(result.diagnosis or result.error or any(not _VALUES_ONLY.fullmatch(m) for m in failed))


# kata folder -> [wrong variants run, diagnosed, pointed]; printed by tests/conftest.py at the end of the run
FIGURES: dict[str, list[int]] = {}
DIAGNOSED_AT_LEAST, POINTED_AT_LEAST = 0.90, 1.0  # issue 16's bounds on the project's own wrong variants


WRONG = _files("wrong")  # read once: the bound below compares with what this session collected


@pytest.mark.parametrize("path", WRONG, ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_wrong_implementation_is_rejected_with_a_pointed_message(path):
    expect = path.read_text(encoding="utf-8").splitlines()[0]
    assert expect.startswith("# expect: "), f"{path} must start with '# expect: TEXT'"
    result = engine.check_file(_kata(path.parent), path)
    figures = FIGURES.setdefault(path.parent.name, [0, 0, 0])
    figures[0] += 1
    figures[1] += bool(result.diagnosis)
    figures[2] += is_pointed(result)
    assert result.status in ("fail", "error"), f"{path.name} was not rejected: {result.status}"
    assert expect.removeprefix("# expect: ") in _report_text(result), _report_text(result)


@pytest.mark.parametrize("path", _files("right"), ids=lambda p: f"{p.parent.name}/{p.stem}")
def test_correct_but_different_implementation_passes(path):
    result = engine.check_file(_kata(path.parent), path)
    assert result.status == "pass", _report_text(result)
    first = path.read_text(encoding="utf-8").splitlines()[0]
    notes = "\n".join(c.message for c in result.followups())
    if first.startswith("# followup: "):
        assert first.removeprefix("# followup: ") in notes, notes or "no follow-up was raised"
        strict = engine.check_file(_kata(path.parent), path, strict=True)
        assert strict.status == "fail", f"--strict passed it: {_report_text(strict)}"
    else:
        assert not notes, f"a right variant without '# followup:' raised: {notes}"


def test_every_kata_has_three_wrong_and_two_right_variants():
    for kata in catalogue.all_katas():
        folder = VARIANTS / f"{kata.track}_{kata.name}"
        wrong, right = list(folder.glob("wrong_*.py")), list(folder.glob("right_*.py"))
        assert len(wrong) >= 3, f"{kata.id}: {len(wrong)} wrong variants in {folder}"
        assert len(right) >= 2, f"{kata.id}: {len(right)} right variants in {folder}"


def test_wrong_variants_are_diagnosed_and_named_across_the_catalogue():
    """Runs after every wrong variant (file order): at least 90% get a diagnosis, every one a pointed message."""
    ran = sum(n for n, _, _ in FIGURES.values())
    if ran < len(WRONG):
        pytest.skip(f"only {ran} of {len(WRONG)} wrong variants ran in this session")
    diagnosed = sum(d for _, d, _ in FIGURES.values())
    pointed = sum(p for _, _, p in FIGURES.values())
    below = {kata: f"{p}/{n} pointed" for kata, (n, _, p) in FIGURES.items() if p < n}
    assert diagnosed >= DIAGNOSED_AT_LEAST * ran, f"{diagnosed} of {ran} wrong variants diagnosed"
    assert pointed >= POINTED_AT_LEAST * ran, f"{pointed} of {ran} wrong variants pointed: {below}"
