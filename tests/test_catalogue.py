"""The registry is consistent (rustlings' `dev check`): every entry complete, nothing orphaned."""

import ast
from pathlib import Path

import pytest

from checker import catalogue, engine, statement
from checker.paths import KATAS, PACKAGE, SOLUTIONS

ROOT = Path(__file__).resolve().parent.parent
KATAS_ALL = catalogue.all_katas()
IDS = [k.id for k in KATAS_ALL]


def _defined_names(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return {n.name for n in tree.body if isinstance(n, (ast.FunctionDef, ast.ClassDef))}


def test_ids_are_unique_and_tracks_known():
    assert len(IDS) == len(set(IDS))
    assert {k.track for k in KATAS_ALL} <= set(catalogue.TRACKS)
    assert {k.part for k in KATAS_ALL} <= set(catalogue.PARTS)
    assert all(1 <= k.difficulty <= 5 for k in KATAS_ALL)


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_entry_is_complete(kata):
    stub, solution = KATAS / kata.file, SOLUTIONS / kata.file
    assert stub.is_file() and solution.is_file()
    assert (PACKAGE / "checks" / f"{kata.track}_{kata.name}.py").is_file()
    for lang in catalogue.LANGUAGES:
        assert kata.statement_path(lang).is_file(), f"no {lang} statement"
        assert len(statement.hints(kata, lang)) == 3, f"{lang} hints: concept, shapes and steps, near-code"
    for path in (stub, solution):
        missing = set(kata.targets) - _defined_names(path)
        assert not missing, f"{path} does not define {missing}"


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_stub_raises_not_implemented_and_never_passes(kata):
    source = (KATAS / kata.file).read_text(encoding="utf-8")
    tree = ast.parse(source)
    raises = [n for n in ast.walk(tree) if isinstance(n, ast.Raise) and "NotImplementedError" in ast.unparse(n)]
    assert raises, "a stub's bodies end in raise NotImplementedError"
    body_pass = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)
                 and len(n.body) <= 2 and any(isinstance(s, ast.Pass) for s in n.body)]
    assert not body_pass, "a stub never uses `pass` for a body the user must write"
    module = tree.body[0]
    assert isinstance(module, ast.Expr) and "legend" in module.value.value.lower(), "docstring opens with a shape legend"


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_reference_passes_every_hidden_check(kata):
    result = engine.check_file(kata, SOLUTIONS / kata.file)
    failures = [f"{c.name}: {c.message}" for c in result.checks if not c.passed]
    assert result.status == "pass", "\n".join(failures) or result.error


@pytest.mark.parametrize("kata", KATAS_ALL, ids=IDS)
def test_pristine_stub_is_not_started(kata):
    result = engine.check_file(kata, KATAS / kata.file)
    assert result.status == "not_started", [c.message for c in result.checks]


def test_no_orphan_files():
    known = {(k.track, k.name) for k in KATAS_ALL}

    def pairs(folder: Path, pattern: str):
        return {(p.parent.name, p.stem.split(".")[0]) for p in folder.glob(pattern)}

    assert pairs(ROOT / "katas", "*/*.py") == known
    assert pairs(ROOT / "solutions", "*/*.py") == known
    assert pairs(PACKAGE / "statements", "*/*.md") == known
    checks = {tuple(p.stem.split("_", 1)) for p in (PACKAGE / "checks").glob("*_*.py") if not p.name.startswith("_")}
    assert checks == known
    variants = {tuple(p.name.split("_", 1)) for p in (ROOT / "tests" / "variants").iterdir() if p.is_dir()}
    assert variants == known
