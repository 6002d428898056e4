"""Mutation testing of the hidden checks: every behaviour-changing mutant of a reference is rejected.

Each reference is mutated mechanically (tests/checks/mutation.py); a mutant that still passes every
hidden check must be listed in tests/checks/equivalent_mutants.toml with the reason it is equivalent.
The kill rate per kata is printed at the end of the run (tests/conftest.py).

A kata's mutants are checked in PARTS tests, so that `pytest -n` spreads the large katas (stacks has
222 mutants, a second each) over its workers. A mutant's part follows from its key, so the mutants
that share a key, and the allow-list's entry for that key, are judged in one part.

A composite kata's file gives parts the user does not write (stacks gives MultiHeadAttention, FeedForward
and both layers, word for word as encoder_layer and decoder_layer give them). The mutants of a given
definition are all judged in the kata whose user writes that same source (encoder_layer for stacks'
EncoderLayer), else in the first kata that gives it; the others judge one in GIVEN_SAMPLE of them again
(by key), so that each kata's own way of noticing a changed given part is still held to it. Before,
stacks and transformer spent most of their ten CPU-minutes there.

A kata with standard checks (OUTPUTS) first runs each mutant in this process on its cases (_Outputs): a
mutant whose outputs the one comparison refuses is rejected by the float64 numerics check, and one in
CONFIRM of those is checked in full too, to hold the shortcut to the check. Where no interval timer can stop a
mutant in this process (Windows), every mutant gets the full check.
"""

import ast
import functools
import importlib.util
import signal
import time
import tomllib
import zlib
from pathlib import Path

import pytest

from checker import catalogue, engine
from checker import kit as kitmod
from checker.kit import errormodel
from checker.catalogue import SOLUTIONS
from mutation import mutants

EQUIVALENT = tomllib.loads((Path(__file__).parent / "equivalent_mutants.toml").read_text(encoding="utf-8"))
PARTS = 4
GIVEN_SAMPLE = 8
CONFIRM = 12  # one in CONFIRM of the mutants the in-process comparison rejects is checked in full as well


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
def _judge() -> dict[str, str]:
    """The source of each given definition (not a target of its kata) -> the kata that judges all its mutants: the
    first whose user writes that same source (stacks gives EncoderLayer word for word as encoder_layer's
    reference), else the first that gives it."""
    written = {text: kata.id for kata in reversed(catalogue.all_katas())
               for name, _, _, text in _definitions(kata) if name in kata.targets}
    first: dict[str, str] = {}
    for kata in catalogue.all_katas():
        for name, _, _, text in _definitions(kata):
            if name not in kata.targets:
                first.setdefault(text, written.get(text, kata.id))
    return first


def _judged_here(kata, mutant) -> bool:
    """Every mutant of the user's part and of a part judged here (_judge); one in GIVEN_SAMPLE of the rest."""
    owner = next(((name, text) for name, start, end, text in _definitions(kata) if start <= mutant.line <= end),
                 None)
    if owner is None or owner[0] in kata.targets or _judge()[owner[1]] == kata.id:
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


class _Outputs:
    """A kata with standard checks (OUTPUTS): its reference's float64 outputs on every case, and a mutant's beside
    them, computed in this process as the error model runs its rewrites (checker.kit.errormodel). A mutant whose
    outputs the one comparison refuses on a case, or that raises there, fails the standard float64 numerics check
    (strict: an accepted convention fails too), so it is rejected without a sandbox: a check of a whole file costs
    a process and a tenth of a second, this a few milliseconds. What it cannot tell (outputs equal on every case, a
    mutant still running at the deadline) is left to the full check."""

    def __init__(self, kata):
        from checker.engine import load_solution

        self.spec = __import__(kata.checks_module, fromlist=["CASES"])
        self.kit = kitmod.Kit(self.spec, None, load_solution(kata))
        self.tol = self.kit.tolerance("float64")
        self.want = {c.id: kitmod.as_outputs(self.kit.reference(self.kit.inputs(c), case=c), self.spec.OUTPUTS)
                     for c in self.spec.CASES}

    def rejects(self, mutant, path: Path, seconds: float) -> bool | None:
        """True: the mutant's outputs differ on a case, or it raises; None: the full check must tell (seconds: the
        check's limit on one call)."""
        spec = importlib.util.spec_from_file_location(f"mutant_{mutant.index}", path)
        module = importlib.util.module_from_spec(spec)
        try:
            with errormodel.quietly(seconds):
                spec.loader.exec_module(module)
        except TimeoutError:
            return None
        except Exception:  # noqa: BLE001 - it does not import: the check's load fails
            return True
        impl = getattr(module, self.spec.TARGET, None)
        if impl is None:
            return True
        for c in self.spec.CASES:
            try:
                with errormodel.quietly(seconds):
                    got = kitmod.as_outputs(self.kit.reference(self.kit.inputs(c), case=c, impl=impl),
                                            self.spec.OUTPUTS)
            except TimeoutError:
                return None  # slow, perhaps right: the check's own time limit decides
            except Exception:  # noqa: BLE001 - the user's code raising on a case fails that check
                return True
            for u, e in zip(got, self.want[c.id]):
                if not kitmod.matches(u, e, self.tol):
                    return True
        return None


@functools.lru_cache(maxsize=None)
def _outputs(kata) -> _Outputs | None:
    """None where the kata has no standard checks, or where nothing can stop a mutant in this process (Windows has
    no interval timer, and a mutant may make a while loop endless): every mutant then gets the full check."""
    spec = __import__(kata.checks_module, fromlist=["OUTPUTS"])
    return _Outputs(kata) if getattr(spec, "OUTPUTS", None) is not None and hasattr(signal, "setitimer") else None


@pytest.fixture(scope="module", autouse=True)
def meta_kernels_imported_once():
    """Otherwise every forked check imports them (1 s, 3 s under load) and may hit the time limit."""
    engine.warm_up()


@pytest.mark.parametrize("part", range(PARTS), ids=lambda p: f"part{p}")
@pytest.mark.parametrize("kata", catalogue.all_katas(), ids=lambda k: k.id)
def test_every_behaviour_changing_mutant_is_rejected(kata, part, tmp_path, record_property):
    allowed = {key for key in EQUIVALENT.get(f"{kata.track}_{kata.name}", {}) if _part(key) == part}
    survivors, total, limit = [], 0, _time_limit(kata)
    outputs = _outputs(kata)
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
        rejected = outputs.rejects(mutant, path, limit) if outputs else None
        if rejected and zlib.crc32(f"confirm {mutant.key}".encode("utf-8")) % CONFIRM:
            continue
        status = engine.check_file(kata, path, timeout=limit, fail_fast=True, strict=True).status
        if status == "pass":
            survivors.append(mutant)
        assert not (rejected and status == "pass"), f"line {mutant.line}: {mutant.what}: its outputs differ from " \
            "the reference's in this process, and the check passes it: the two ways of running it disagree"
    record_property("kill", (kata.id, total - len(survivors), total))  # added up by tests/conftest.py
    unexplained = [f"line {m.line}: {m.what}" for m in survivors if m.key not in allowed]
    assert not unexplained, "mutants that pass the hidden checks:\n" + "\n".join(unexplained)
    stale = {key for key in allowed if key not in made or key not in unjudged | {m.key for m in survivors}}
    assert not stale, f"listed as equivalent but now killed or gone (remove them): {sorted(stale)}"


def test_without_an_interval_timer_every_mutant_gets_the_full_check(monkeypatch):
    """Windows: nothing could stop a mutant whose while loop no longer ends in the test's process."""
    kata = catalogue.find("layer_norm")
    assert isinstance(_outputs.__wrapped__(kata), _Outputs)
    monkeypatch.delattr(signal, "setitimer")
    assert _outputs.__wrapped__(kata) is None
