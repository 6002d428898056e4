"""Realistic implementations, wrong and right, for every kata (checker/checks/TRACK_NAME/variants/).

wrong_*.py must fail, and the report must contain the text on its first line `# expect: TEXT`.
right_*.py are correct implementations that differ from the reference; they must pass. One whose first
line is `# followup: TEXT` passes with an accepted variant or a follow-up question containing TEXT,
and fails under --strict.

Each is checked while Chinese is spoken and its report drawn in English: the language is chosen where a
result is drawn, so the English report holds no Chinese (a sentence glued as text, not kept as a message,
would stay in the language of the check). Of each kata, the wrong variant in the middle by name is drawn at 80
columns in both languages too, and held to 40 lines (tests/commands/test_report_length.py says why).
"""

import json
import re
from pathlib import Path

import pytest
from checker import catalogue, engine, results
from checker.app import report
from checker.lang import speaking
from conftest import variant_files
from report_reading import held_to_40_lines, wrong_variants

pytestmark = pytest.mark.usefixtures("meta_kernels")  # each check's child inherits them (tests/conftest.py)

# Chinese punctuation (，。：（）), which every Chinese sentence of kata's has and no English one: an English
# sentence may gloss a term in Chinese, LayerNorm (层归一化).
_CHINESE = re.compile(r"[\u3000-\u303f\uff00-\uffef]")


def _checked(path: Path, seen=None, **options):
    """path's result, checked in Chinese and drawn in English (where every sentence of it must be English), and
    read back from its --json document into the same objects (repr: a NaN of the weights equals itself).
    seen(result): called with the result before it is drawn, its sentences still messages."""
    with speaking("zh"):
        result = engine.check_file(_kata(path), path, timed=False, **options)
    if seen is not None:
        seen(result)
    result = report.drawn(result)
    document = json.dumps({"katas": [report.as_json(result)]}, ensure_ascii=False)
    assert [repr(back) for back in results.from_json(document)] == [repr(result)], "--json lost or changed a field"
    texts = [result.diagnosis or "", result.error] + [s or "" for c in result.checks for s in (c.name, c.message, c.diagnosis)]
    leftover = [text for text in texts if _CHINESE.search(re.sub(r"'[^']*'", "", text))]  # not in quoted data
    assert not leftover, f"drawn in English, still Chinese: {leftover[0]}"
    return result


def _kata(path: Path):
    """The kata a variant belongs to: checker/checks/TRACK_NAME/variants/FILE."""
    track, name = path.parent.parent.name.split("_", 1)
    return catalogue.find(name if track == catalogue.DEFAULT_TRACK else f"{track}/{name}")


def _report_text(result) -> str:
    return "\n".join([result.diagnosis or "", result.error] + [f"{c.message}\n{c.diagnosis or ''}" for c in result.checks])


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


def _tiered(prefix: str) -> list:
    """Every kata's wrong_*.py or right_*.py: the first of each kata (by name) in the fast tier, the rest marked
    slow (pytest -m "not slow" runs one wrong and one right variant per kata; CI runs them all)."""
    firsts, params = set(), []
    for path in variant_files(prefix):
        kata = path.parent.parent.name
        marks = () if kata not in firsts else pytest.mark.slow
        firsts.add(kata)
        params.append(pytest.param(path, marks=marks, id=f"{kata}/{path.stem}"))
    return params


@pytest.mark.parametrize("path", _tiered("wrong"))
def test_wrong_implementation_is_rejected_with_a_pointed_message(path, record_property):
    """Also reports whether it was diagnosed and pointed: tests/conftest.py adds these up over the run, prints
    them per kata, and holds the whole catalogue to its bounds once every wrong variant has run."""
    expect = path.read_text(encoding="utf-8").splitlines()[0]
    assert expect.startswith("# expect: "), f"{path} must start with '# expect: TEXT'"
    variants = wrong_variants(_kata(path))
    result = _checked(path, seen=held_to_40_lines if path == variants[len(variants) // 2] else None)
    record_property("variant", (path.parent.parent.name, int(bool(result.diagnosis)), int(is_pointed(result))))
    assert result.status in ("fail", "error"), f"{path.name} was not rejected: {result.status}"
    assert expect.removeprefix("# expect: ") in _report_text(result), _report_text(result)


@pytest.mark.parametrize("path", _tiered("right"))
def test_correct_but_different_implementation_passes(path):
    result = _checked(path)
    assert result.status == "pass", _report_text(result)
    first = path.read_text(encoding="utf-8").splitlines()[0]
    notes = "\n".join(c.message for c in result.followups())
    if first.startswith("# followup: "):
        assert first.removeprefix("# followup: ") in notes, notes or "no follow-up was raised"
        strict = _checked(path, strict=True)
        assert strict.status == "fail", f"--strict passed it: {_report_text(strict)}"
    else:
        assert not notes, f"a right variant without '# followup:' raised: {notes}"


def test_every_kata_has_three_wrong_and_two_right_variants():
    for kata in catalogue.all_katas():
        folder = kata.folder / "variants"
        wrong, right = list(folder.glob("wrong_*.py")), list(folder.glob("right_*.py"))
        assert len(wrong) >= 3, f"{kata.id}: {len(wrong)} wrong variants in {folder}"
        assert len(right) >= 2, f"{kata.id}: {len(right)} right variants in {folder}"
