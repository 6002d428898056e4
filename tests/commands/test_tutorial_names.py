"""The five tutorials the catalogue comes from are named by their titles wherever a learner reads about
them, never as "seed 00N" (issue 26): a learner does not know what a seed is. The titles are listed in
the README ("The catalogue")."""

import ast
import re
import tomllib

import pytest
from conftest import ROOT, run_json, variant

from checker import catalogue
from checker.lang import catalogues

from test_messages import MODULES, _english

SEED = re.compile(r"\bseeds?\s+0{2}\d|\bseed0{2}\d|种子\s*0{2}\d", re.IGNORECASE)
TITLES = {"the NumPy tutorial": "《用 NumPy 复现 Transformer》",
          "the Decoder Block tutorial": "《手把手教你写 Transformer Decoder Block》",
          "the paper walkthrough": "《论文深度解读：Attention Is All You Need》",
          "the interview tutorial": "《手撕 Transformer：从零实现面试速通教程》",
          "the PyTorch notebook tutorial": "《从分词到完整 Transformer（PyTorch）》"}
CHECKS = ROOT / "checker" / "checks"


def _says_a_seed(texts: dict[str, str]) -> list[str]:
    return [f"{where}: {SEED.search(text).group()!r}" for where, text in texts.items() if SEED.search(text)]


def _docstrings(path):
    tree = ast.parse(path.read_text(encoding="utf-8"))
    nodes = [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]
    return {f"{path.relative_to(ROOT)}:{getattr(n, 'name', '')}": ast.get_docstring(n) or "" for n in nodes}


def test_the_catalogue_names_no_seed():
    texts = {}
    for k in catalogue.all_katas():
        for field in ("title", "title_zh", "summary"):
            texts[f"{k.name}.{field}"] = getattr(k, field)
    assert texts and not _says_a_seed(texts)


def test_statements_name_no_seed():
    texts = {str(p.relative_to(ROOT)): p.read_text(encoding="utf-8") for p in CHECKS.glob("*/statement*.md")}
    assert len(texts) > 40 and not _says_a_seed(texts)


def test_check_messages_in_both_languages_name_no_seed():
    """Every English template the checks write (titles, failures, diagnoses, follow-ups, accepted variants)
    and every Chinese value of the catalogues."""
    english = {f"{p.relative_to(ROOT)}: {s[:40]}": s for p in MODULES for s in _english(p)}
    chinese = {}
    for path in catalogues():
        for key, value in tomllib.loads(path.read_text(encoding="utf-8")).items():
            chinese[f"{path.relative_to(ROOT)}: {key[:40]}"] = key + "\n" + value
    assert len(english) > 1000 and len(chinese) > 1000
    assert not _says_a_seed(english) and not _says_a_seed(chinese)


@pytest.mark.parametrize("folder", ["katas", "solutions"])
def test_stubs_and_solutions_name_no_seed(folder):
    texts = {}
    for path in sorted((ROOT / folder).rglob("*.py")):
        texts.update(_docstrings(path))
        texts[str(path.relative_to(ROOT))] = path.read_text(encoding="utf-8")  # comments are read too
    assert texts and not _says_a_seed(texts)


def test_the_readme_lists_the_titles_and_names_no_seed():
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert not _says_a_seed({"README.md": text})
    for english, chinese in TITLES.items():
        assert f"| {english} | {chinese}" in text, english


@pytest.mark.parametrize("lang", ["en", "zh"])
def test_an_accepted_variant_names_the_tutorial_by_its_title(workspace, lang):
    """The interview tutorial's cross mask passes as an accepted variant whose note names the tutorial."""
    source = variant("torch_masks", "right_seed003_cross_mask").read_text(encoding="utf-8")
    (workspace / "torch" / "masks.py").write_text(source, encoding="utf-8")
    _, doc = run_json("check", "masks", "--workspace", workspace, "--lang", lang)
    (kata,) = doc["katas"]
    notes = " ".join(f["message"] for f in kata["followups"])
    everything = str(doc)
    assert kata["status"] == "pass" and not SEED.search(everything), everything
    wanted = "the interview tutorial's make_pad_mask" if lang == "en" else "《手撕 Transformer：从零实现面试速通教程》的 make_pad_mask"
    assert wanted in notes, notes
