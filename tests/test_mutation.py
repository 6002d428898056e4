"""Mutation testing of the hidden checks: every behaviour-changing mutant of a reference is rejected.

Each reference is mutated mechanically (tests/mutation.py); a mutant that still passes every
hidden check must be listed in tests/equivalent_mutants.toml with the reason it is equivalent.
The kill rate per kata is printed at the end of the run (tests/conftest.py).
"""

import tomllib
from pathlib import Path

import pytest

from checker import catalogue, engine
from checker.catalogue import SOLUTIONS
from mutation import mutants

EQUIVALENT = tomllib.loads((Path(__file__).parent / "equivalent_mutants.toml").read_text(encoding="utf-8"))
MUTANT_TIMEOUT = 3.0  # seconds per call: a mutant that loops forever is killed by the time limit


@pytest.fixture(scope="module", autouse=True)
def meta_kernels_imported_once():
    """Otherwise every forked check imports them (1 s, 3 s under load) and may hit the time limit."""
    engine.warm_up()


@pytest.mark.parametrize("kata", catalogue.all_katas(), ids=lambda k: k.id)
def test_every_behaviour_changing_mutant_is_rejected(kata, tmp_path, record_property):
    allowed = EQUIVALENT.get(f"{kata.track}_{kata.name}", {})
    survivors, total = [], 0
    for mutant in mutants((SOLUTIONS / kata.file).read_text(encoding="utf-8")):
        total += 1
        path = tmp_path / f"{kata.name}_{mutant.index}.py"
        path.write_text(mutant.source, encoding="utf-8")
        if engine.check_file(kata, path, timeout=MUTANT_TIMEOUT, fail_fast=True, strict=True).status == "pass":
            survivors.append(mutant)
    record_property("kill", (kata.id, total - len(survivors), total))  # printed by tests/conftest.py
    unexplained = [f"line {m.line}: {m.what}" for m in survivors if m.key not in allowed]
    assert not unexplained, "mutants that pass the hidden checks:\n" + "\n".join(unexplained)
    stale = set(allowed) - {m.key for m in survivors}
    assert not stale, f"listed as equivalent but now killed or gone (remove them): {sorted(stale)}"
