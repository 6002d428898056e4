"""The two tiers (README, Tests): `pytest -m "not slow"` and everything. What is slow is named in one place,
tests/conftest.py's SLOW (and by parametrisation in tests/checks/test_variants.py); a name there that no longer
names a test would quietly move that test into the fast tier's three minutes, or nowhere."""

import ast
import sys

import pytest
from conftest import ROOT, SLOW, variant_files


def test_every_slow_entry_names_a_test_that_exists():
    for entry in SLOW:
        path, _, name = entry.partition("::")
        assert (ROOT / path).is_file(), f"SLOW names {path}, which does not exist"
        if name:
            tree = ast.parse((ROOT / path).read_text(encoding="utf-8"))
            assert name in {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}, \
                f"SLOW names {entry}, which does not exist"


def test_the_fast_tier_holds_one_wrong_and_one_right_variant_of_every_kata():
    sys.path.insert(0, str(ROOT / "tests" / "checks"))
    from test_variants import _tiered

    for prefix in ("wrong", "right"):
        params = _tiered(prefix)
        fast = [p.values[0] for p in params if not any(m.name == "slow" for m in p.marks)]
        katas = {path.parent.parent.name for path in variant_files(prefix)}
        assert sorted(path.parent.parent.name for path in fast) == sorted(katas), prefix
        assert len(params) == len(variant_files(prefix)), "every variant runs in the slow tier"


@pytest.mark.parametrize("method, slow", [("fork", False), ("forkserver", True), ("spawn", True)])
def test_the_sandbox_runs_under_fork_in_the_fast_tier_and_the_other_start_methods_in_the_slow(method, slow):
    from conftest import _slow

    class Item:  # what _slow reads of a collected test
        nodeid, originalname, fixturenames = "tests/sandbox/test_boundary.py::test_x", "test_x", ()

        class callspec:
            params = {"method": method}

    from checker.sandbox import processes

    assert _slow(Item()) is (slow and not processes.accelerator())
