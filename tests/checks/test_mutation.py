"""Mutation testing of the hidden checks: every behaviour-changing mutant of a reference is rejected.

Each reference is mutated mechanically (tests/checks/mutation.py); a mutant that still passes every
hidden check must be listed in tests/checks/equivalent_mutants.toml with the reason it is equivalent.
The kill rate per kata is printed at the end of the run (tests/conftest.py).

A kata's mutants are checked in PARTS tests, so that `pytest -n` spreads the large katas (stacks has
222 mutants, a second each) over its workers. A mutant's part follows from its key, so the mutants
that share a key, and the allow-list's entry for that key, are judged in one part.

A composite kata's file gives parts the user does not write (stacks gives MultiHeadAttention, FeedForward
and both layers, word for word as encoder_layer and decoder_layer give them). The mutants of a given
definition are all judged in the first kata that gives that same source; the later ones judge one in
GIVEN_SAMPLE of them again (by key), so that each kata's own way of noticing a changed given part is
still held to it. Before, stacks and transformer spent most of their ten CPU-minutes there.
"""

import ast

import functools
import time
import tomllib
import zlib
from pathlib import Path

import pytest

from checker import catalogue, engine
from checker.catalogue import SOLUTIONS
from mutation import mutants

EQUIVALENT = tomllib.loads((Path(__file__).parent / "equivalent_mutants.toml").read_text(encoding="utf-8"))
PARTS = 4
GIVEN_SAMPLE = 8


def _part(key: str) -> int:
    return zlib.crc32(key.encode("utf-8")) % PARTS


@functools.lru_cache(maxsize=None)
def _mutants(kata) -> tuple:
    return tuple(mutants((SOLUTIONS / kata.file).read_text(encoding="utf-8")))


def _definitions(kata) -> list[tuple[str, int, int, str]]:
    """(name, first line, last line, source) of each top-level class and function of the reference."""
    source = (SOLUTIONS / kata.file).read_text(encoding="utf-8")
    return [(node.name, node.lineno, node.end_lineno, ast.get_source_segment(source, node))
            for node in ast.parse(source).body if isinstance(node, (ast.ClassDef, ast.FunctionDef))]


@functools.lru_cache(maxsize=None)
def _first_giver() -> dict[str, str]:
    """The source of each given definition (not a target of its kata) -> the first kata that gives it."""
    first: dict[str, str] = {}
    for kata in catalogue.all_katas():
        for name, _, _, text in _definitions(kata):
            if name not in kata.targets:
                first.setdefault(text, kata.id)
    return first


def _judged_here(kata, mutant) -> bool:
    """Every mutant of the user's part and of a part given here first; one in GIVEN_SAMPLE of the rest."""
    owner = next(((name, text) for name, start, end, text in _definitions(kata) if start <= mutant.line <= end),
                 None)
    if owner is None or owner[0] in kata.targets or _first_giver()[owner[1]] == kata.id:
        return True
    return zlib.crc32(f"given {mutant.key}".encode("utf-8")) % GIVEN_SAMPLE == 0  # apart from _part's hash


@functools.lru_cache(maxsize=None)
def _time_limit(kata) -> float:
    """Seconds one call of a mutant may take: four times the reference's whole strict run (measured here, under
    whatever load the run is under), at least half a second and at most 3 s. A mutant that loops forever
    (bpe's merge loop with a flipped comparison) then costs a fraction of a second, not 3 s per call."""
    start = time.perf_counter()
    result = engine.check_file(kata, SOLUTIONS / kata.file, timeout=3.0, fail_fast=True, strict=True)
    assert result.status == "pass", f"the reference of {kata.id} fails its own checks: {result.status}"
    return min(3.0, max(0.5, 4 * (time.perf_counter() - start)))


@pytest.fixture(scope="module", autouse=True)
def meta_kernels_imported_once():
    """Otherwise every forked check imports them (1 s, 3 s under load) and may hit the time limit."""
    engine.warm_up()


@pytest.mark.parametrize("part", range(PARTS), ids=lambda p: f"part{p}")
@pytest.mark.parametrize("kata", catalogue.all_katas(), ids=lambda k: k.id)
def test_every_behaviour_changing_mutant_is_rejected(kata, part, tmp_path, record_property):
    allowed = {key for key in EQUIVALENT.get(f"{kata.track}_{kata.name}", {}) if _part(key) == part}
    survivors, total, limit = [], 0, _time_limit(kata)
    made = {m.key for m in _mutants(kata) if _part(m.key) == part}
    unjudged = set()  # keys with a mutant left to the kata that gives its part first
    for mutant in _mutants(kata):
        if _part(mutant.key) != part:
            continue
        if not _judged_here(kata, mutant):
            unjudged.add(mutant.key)
            continue
        total += 1
        path = tmp_path / f"{kata.name}_{mutant.index}.py"
        path.write_text(mutant.source, encoding="utf-8")
        if engine.check_file(kata, path, timeout=limit, fail_fast=True, strict=True).status == "pass":
            survivors.append(mutant)
    record_property("kill", (kata.id, total - len(survivors), total))  # added up by tests/conftest.py
    unexplained = [f"line {m.line}: {m.what}" for m in survivors if m.key not in allowed]
    assert not unexplained, "mutants that pass the hidden checks:\n" + "\n".join(unexplained)
    stale = {key for key in allowed if key not in made or key not in unjudged | {m.key for m in survivors}}
    assert not stale, f"listed as equivalent but now killed or gone (remove them): {sorted(stale)}"
