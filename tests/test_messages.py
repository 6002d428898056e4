"""One message mechanism (checker/lang.py): every sentence written through it exists in English and
Chinese, with the same named placeholders; and a check run speaks the language asked for."""

import ast
import importlib
import re
import string
from pathlib import Path

import pytest
from rich.cells import cell_len

from checker.lang import STRINGS, ZH, register, speaking, t
from conftest import ROOT, run_json, run_kata

PACKAGE = ROOT / "checker"
MODULES = sorted(p for p in PACKAGE.rglob("*.py") if "_katas" not in p.parts and "_solutions" not in p.parts)


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _english(path: Path) -> list[str]:
    """The English templates a module writes through the mechanism: t("..."), check titles, and the
    explanations of its Mistakes and Conventions, once the module keeps a table (_ZH)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    has_table = any(isinstance(n, ast.Assign) and any(getattr(x, "id", "") == "_ZH" for x in n.targets)
                    for n in tree.body)
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name == "t" and node.args and isinstance(node.args[0], ast.Constant):
            found.append(node.args[0].value)
        elif has_table and name == "check" and len(literal) >= 2:
            found.append(literal[1])
        elif has_table and name == "Mistake" and len(literal) >= 2:
            found.append(literal[-1])
        elif has_table and name == "Convention":
            found += [k.value.value for k in node.keywords if k.arg == "explain" and isinstance(k.value, ast.Constant)]
            found += literal[1:2]
    return found


def _import_all():
    for path in MODULES:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if not module.endswith("__main__"):
            importlib.import_module(module)


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_sentence_through_the_mechanism_has_chinese_with_the_same_placeholders(path):
    _import_all()
    missing = [e for e in _english(path) if e not in ZH]
    assert not missing, f"{path.name}: no Chinese for:\n" + "\n".join(missing)


def test_tables_keep_placeholders_and_are_really_chinese():
    _import_all()
    for english, chinese in ZH.items():
        assert _fields(english) == _fields(chinese), f"placeholders differ:\n{english}\n{chinese}"
        assert english.strip() == "" or chinese != english or not re.search(r"[A-Za-z]{4}", english), \
            f"not translated: {english}"
    for key, (english, chinese) in STRINGS.items():
        assert chinese and _fields(english) == _fields(chinese), key


def test_every_case_label_speaks_chinese():
    """A case's settings are shown in its label: prose among them ("variance about 0.01") has Chinese;
    one-word settings (post, causal, padding) are the code's own option names and stay."""
    from checker import catalogue

    prose = re.compile(r"[A-Za-z]{3,} [a-z]{2,}")
    left = []
    for kata in catalogue.all_katas():
        spec = importlib.import_module(kata.checks_module)
        for c in [*spec.CASES, *[getattr(spec, "TIMING", None)] * hasattr(spec, "TIMING")]:
            with speaking("zh"):
                label = c.label
            left += [f"{kata.id}: {label}"] * bool(prose.search(label.replace("case ", "")))
    assert not left, "\n".join(left)


def test_t_speaks_the_language_of_the_block_and_falls_back_to_english():
    register({"{n} apples": "{n} 个苹果"})
    assert t("{n} apples", n=3) == "3 apples"
    with speaking("zh"):
        assert t("{n} apples", n=3) == "3 个苹果"
        assert t("no table has this") == "no table has this"
    assert t("{n} apples", n=1) == "1 apples"


WRONG = ROOT / "tests" / "variants" / "torch_attention" / "wrong_missing_scale.py"


def test_a_wrong_attention_file_gets_a_chinese_verdict_with_lang_zh_or_the_locale_alone(workspace):
    (workspace / "torch" / "attention.py").write_text(WRONG.read_text(encoding="utf-8"), encoding="utf-8")
    for how in ({"args": ["--lang", "zh"]}, {"env": {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "KATA_LANG": ""}}):
        proc, doc = run_json("check", "attention", "--workspace", workspace, *how.get("args", []),
                             env=how.get("env"))
        (kata,) = doc["katas"]
        assert kata["status"] == "fail" and "缩放" in kata["diagnosis"], kata["diagnosis"]
        failed = [c for c in kata["checks"] if not c["passed"]]
        assert failed and all("个元素中有" in c["message"] for c in failed), failed
        assert all(re.search(r"[\u4e00-\u9fff]", c["name"]) for c in kata["checks"]), "every title in Chinese"
        assert set(kata) >= {"status", "checks", "diagnosis", "followups"}, "field names stay English"
    text = run_kata("check", "attention", "--workspace", workspace, "--lang", "zh").stdout
    assert "诊断" in text and "未通过" in text


def test_a_chinese_report_at_80_columns_wraps_and_cuts_nothing(workspace):
    """rich alone breaks Chinese only at spaces and cut the case labels with an ellipsis."""
    inverted = ROOT / "tests" / "variants" / "torch_attention" / "wrong_mask_inverted.py"
    (workspace / "torch" / "attention.py").write_text(inverted.read_text(encoding="utf-8"), encoding="utf-8")
    text = run_kata("check", "attention", "--workspace", workspace, "--lang", "zh", env={"COLUMNS": "80"}).stdout
    assert "诊断" in text and "mask=padding" in text
    assert "…" not in text, text
    assert max(map(cell_len, text.splitlines())) <= 80


def test_list_gives_chinese_titles():
    proc = run_kata("list", "--lang", "zh")
    assert proc.returncode == 0 and "缩放点积注意力" in proc.stdout and "题目" in proc.stdout
    _, doc = run_json("list", "--lang", "zh")
    assert {k["name"]: k["title"] for k in doc["katas"]}["attention"] == "缩放点积注意力"


def test_stats_and_init_speak_chinese_and_stats_cuts_nothing_at_80_columns(tmp_path):
    ws = tmp_path / "ws"
    assert "工作区已就绪" in run_kata("init", ws, "--lang", "zh").stdout
    (ws / "torch" / "grouped_query_attention.py").write_text(WRONG.read_text(encoding="utf-8"), encoding="utf-8")
    run_kata("check", "grouped_query_attention", "--workspace", ws)
    for lang, heading in (("zh", "通过率"), ("en", "practised")):
        out = run_kata("stats", "--workspace", ws, "--lang", lang, env={"COLUMNS": "80"}).stdout
        assert heading in out and "…" not in out and "grouped_quer" in out, out


def test_no_english_sentence_has_two_different_chinese_translations():
    """Every table feeds one lookup, so a template two modules translate differently would depend on import order."""
    _import_all()
    import sys

    tables = {name: m._ZH for name, m in sys.modules.items() if name.startswith("checker") and hasattr(m, "_ZH")}
    clashes = [f"{english!r}: {ZH[english]!r} vs {chinese!r} ({name})"
               for name, table in tables.items() for english, chinese in table.items() if ZH[english] != chinese]
    assert not clashes, "\n".join(clashes)
