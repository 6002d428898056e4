"""One message mechanism (checker/lang.py): every sentence written through it exists in English and
Chinese, with the same named placeholders; and a check run speaks the language asked for.

The Chinese is data (checker/zh.toml, checker/checks/TRACK_NAME/zh.toml): the tests below extract every
English template the code writes (t("..."), check titles, the explanations of Mistakes and Conventions)
and look each up there."""

import ast
import importlib
import re
import string
import tomllib
from pathlib import Path

import pytest
from conftest import checker_modules, ROOT, run_json, run_kata, variant
from rich.cells import cell_len

from checker import lang
from checker.lang import STRINGS, catalogues, chinese, speaking, t

PACKAGE = ROOT / "checker"
MODULES = checker_modules()


def _fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def _english(path: Path) -> list[str]:
    """The English templates a module writes through the mechanism: t("..."), check titles, and the
    explanations of its Mistakes and Conventions."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = getattr(node.func, "id", getattr(node.func, "attr", ""))
        literal = [a.value for a in node.args if isinstance(a, ast.Constant) and isinstance(a.value, str)]
        if name == "t" and node.args and isinstance(node.args[0], ast.Constant):
            found.append(node.args[0].value)
        elif name in ("Preset", "Said") and literal:  # Said: what kata's stand-in models raise (checker/errors.py)
            found.append(literal[0])
        elif name == "check" and len(literal) >= 2:
            found.append(literal[1])
        elif name == "Mistake" and len(literal) >= 2:
            found.append(literal[-1])
        elif name == "Convention":
            found += [k.value.value for k in node.keywords if k.arg == "explain" and isinstance(k.value, ast.Constant)]
            found += literal[1:2]
    return found


def _import_all():
    for path in MODULES:
        module = ".".join(path.relative_to(ROOT).with_suffix("").parts)
        if not module.endswith("__main__"):
            importlib.import_module(module)


def _catalogue(path: Path) -> dict:
    return tomllib.loads(path.read_text(encoding="utf-8")) if path.is_file() else {}


@pytest.mark.parametrize("path", MODULES, ids=lambda p: str(p.relative_to(PACKAGE)))
def test_every_sentence_through_the_mechanism_has_chinese_with_the_same_placeholders(path):
    """In a catalogue read by the time it is spoken: the core's, or for a kata's check module its own."""
    read = _catalogue(PACKAGE / "zh.toml")
    if path.name == "checks.py":  # a kata's checks: its own catalogue beside it
        read = {**read, **_catalogue(path.parent / "zh.toml")}
    missing = [e for e in _english(path) if e not in read]
    assert not missing, f"{path.name}: no Chinese in the catalogues read for it:\n" + "\n".join(missing)


@pytest.mark.parametrize("path", catalogues(), ids=lambda p: p.name)
def test_catalogues_keep_placeholders_and_are_really_chinese(path):
    for english, chinese_ in tomllib.loads(path.read_text(encoding="utf-8")).items():
        assert _fields(english) == _fields(chinese_), f"{path.name}: placeholders differ:\n{english}\n{chinese_}"
        assert english.strip() == "" or chinese_ != english or not re.search(r"[A-Za-z]{4}", english), \
            f"{path.name}: not translated: {english}"


def test_every_screen_sentence_has_chinese_with_the_same_placeholders():
    for key, english in STRINGS.items():
        assert english in chinese() and _fields(english) == _fields(chinese()[english]), key


def test_every_case_label_speaks_chinese():
    """A case's settings are shown in its label, every case a report can name: in Chinese, every word that is not
    code (randn, PAD, float16, tgt_mask) or an option value the user's code reads (layout=half) is Chinese."""
    from checker import catalogue, kit

    code = {"randn", "PAD", "None", "True", "False", "float16", "relu", "gelu", "cpu", "half", "interleaved", "lang",
            "tgt_mask", "memory_mask", "Pre", "Post", "eps", "mean"}
    left = []
    for kata in catalogue.all_katas():
        spec = importlib.import_module(kata.checks_module)
        cases = {c.id: c for value in vars(spec).values()
                 for c in (value if isinstance(value, list | tuple) else (value,)) if isinstance(c, kit.Case)}
        for c in cases.values():
            with speaking("zh"):
                lang.read_catalogue(kata.checks_module)  # as the engine does before the kata's checks run
                label = str(c.label)
            settings = re.sub(r"\b\w+=", "", label)
            words = {w for w in re.findall(r"[A-Za-z_0-9]*[A-Za-z]{3,}[A-Za-z_0-9]*", settings)
                     if not re.search(r"[_0-9]", w)} - code  # T_k, d_k, float16: names from the code
            left += [f"{kata.id}: {sorted(words)} in {label}"] * bool(words)
    assert not left, "\n".join(sorted(left))


def test_t_speaks_the_language_of_the_block_and_falls_back_to_english(monkeypatch):
    monkeypatch.setitem(chinese(), "{n} apples", "{n} 个苹果")
    assert t("{n} apples", n=3) == "3 apples"
    with speaking("zh"):
        assert t("{n} apples", n=3) == "3 个苹果"
        assert t("no table has this") == "no table has this"
    assert t("{n} apples", n=1) == "1 apples"


def test_english_counts_take_their_plural_and_chinese_has_none():
    assert t("{count} check(s) passed", count=1) == "1 check passed"
    assert t("{count} check(s) passed", count=0) == "0 checks passed"
    assert str(t(" · {count} more check(s) skipped until the ones above pass", count=1)).startswith(
        " · 1 more check skipped")
    assert t("{part} is called {actual} time(s); the reference calls it {expected} time(s): {why}", part="ffn",
             actual=2, expected=1, why="x") == "ffn is called 2 times; the reference calls it 1 time: x"
    assert t("{days} day(s) ago", days="a few") == "a few day(s) ago", "not a count: left as written"
    with speaking("zh"):
        assert t("{count} check(s) passed", count=1) == "1 项检查通过"


WRONG = variant("torch_attention", "wrong_missing_scale")


def test_a_wrong_attention_file_gets_a_chinese_verdict_with_lang_zh_or_the_locale_alone(workspace):
    (workspace / "torch" / "attention.py").write_text(WRONG.read_text(encoding="utf-8"), encoding="utf-8")
    for how in ({"args": ["--lang", "zh"]}, {"env": {"LANG": "zh_CN.UTF-8", "LC_ALL": "", "KATA_LANG": ""}}):
        proc, doc = run_json("check", "attention", "--workspace", workspace, *how.get("args", []),
                             env=how.get("env"))
        (kata,) = doc["katas"]
        assert kata["status"] == "fail" and "缩放" in kata["diagnosis"], kata["diagnosis"]
        failed = [c for c in kata["checks"] if c["status"] in ("fail", "error")]
        assert failed and all("个元素中有" in c["message"] for c in failed), failed
        assert all(re.search(r"[\u4e00-\u9fff]", c["name"]) for c in kata["checks"]), "every title in Chinese"
        assert set(kata) >= {"status", "checks", "diagnosis", "followups"}, "field names stay English"
    text = run_kata("check", "attention", "--workspace", workspace, "--lang", "zh").stdout
    assert "诊断" in text and "未通过" in text


def test_a_chinese_report_at_80_columns_wraps_and_cuts_nothing(workspace):
    """rich alone breaks Chinese only at spaces and cut the case labels with an ellipsis."""
    inverted = variant("torch_attention", "wrong_mask_inverted")
    (workspace / "torch" / "attention.py").write_text(inverted.read_text(encoding="utf-8"), encoding="utf-8")
    text = run_kata("check", "attention", "--workspace", workspace, "--lang", "zh", env={"COLUMNS": "80"}).stdout
    assert "诊断" in text and "mask=填充" in text
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
    created = run_kata("check", "attention", "--lang", "zh", env={"XDG_DATA_HOME": str(tmp_path / "data")})
    assert "已在" in created.stderr and "创建你的工作区" in created.stderr, created.stderr
    missing = run_kata("check", "attention", "--workspace", tmp_path / "nowhere", "--lang", "zh")
    assert missing.returncode == 2 and "不存在" in missing.stderr.replace("\n", ""), missing.stderr  # Chinese wraps anywhere
    (ws / "torch" / "grouped_query_attention.py").write_text(WRONG.read_text(encoding="utf-8"), encoding="utf-8")
    run_kata("check", "grouped_query_attention", "--workspace", ws)
    for lang, heading in (("zh", "通过率"), ("en", "practised")):
        out = run_kata("stats", "--workspace", ws, "--lang", lang, env={"COLUMNS": "80"}).stdout
        assert heading in out and "…" not in out and "grouped_quer" in out, out


def test_no_english_sentence_has_two_different_chinese_translations():
    """The catalogues feed one lookup, so a template two of them translate differently would depend on which is
    read last."""
    seen: dict[str, tuple[str, str]] = {}
    clashes = []
    for path in catalogues():
        for english, chinese_ in tomllib.loads(path.read_text(encoding="utf-8")).items():
            if english in seen and seen[english][1] != chinese_:
                clashes.append(f"{english!r}: {seen[english]} vs {(path.name, chinese_)}")
            seen.setdefault(english, (path.name, chinese_))
    assert not clashes, "\n".join(clashes)


def _han(value) -> bool:
    return isinstance(value, str) and re.search(r"[\u4e00-\u9fff]", value) is not None


def _tables(path: Path) -> list[str]:
    """Translation tables in a module: a dict from English to Chinese or to a pair (English, Chinese), or a
    Chinese string passed as a keyword ending in _zh. (Chinese as test data, or a heading the statement
    parser looks for, is no table.)"""
    found = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Dict):
            for key, value in zip(node.keys, node.values):
                if isinstance(value, ast.Tuple) and len(value.elts) == 2:
                    key, value = value.elts
                if isinstance(key, ast.Constant) and isinstance(value, ast.Constant) and not _han(key.value) \
                        and _han(value.value):
                    found.append(f"line {node.lineno}: {{{key.value!r}: ...}}")
                    break
        elif isinstance(node, ast.keyword) and (node.arg or "").endswith("_zh") and isinstance(node.value, ast.Constant):
            found.append(f"line {node.value.lineno}: {node.arg}=")
    return found


def test_the_checkers_python_holds_no_translation_table():
    """Chinese sentences live in the catalogues and in the statements (.zh.md), never beside their English in code."""
    found = [f"{p.relative_to(ROOT)} {where}" for p in MODULES for where in _tables(p)]
    assert not found, "translation tables in the code (move them to the catalogues):\n" + "\n".join(found)


def test_english_is_spoken_without_reading_a_catalogue():
    """The catalogues are read the first time Chinese is spoken, not at import: English costs nothing."""
    import subprocess
    import sys

    code = ("import checker.app.cli, checker.lang as l; from checker.lang import t; t('x');"
            "assert not l._read, 'read at import'")
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).returncode == 0


def test_a_usage_error_speaks_chinese_and_keeps_its_command_whole():
    """An unknown kata under --lang zh is said in Chinese, and at 40 columns `kata list` stays on one line."""
    proc = run_kata("check", "attentoin", "--lang", "zh", env={"COLUMNS": "40"})
    assert proc.returncode == 2 and "没有名为“attentoin”的练习" in proc.stderr.replace("\n", ""), proc.stderr
    assert "`kata list`" in proc.stderr and "attention" in proc.stderr
    assert "no kata named" in run_kata("check", "attentoin", "--lang", "en").stderr


def test_a_message_is_a_record_drawn_where_it_is_shown():
    """A message is no str (issue 37): it holds its template and values, str() draws it in the language spoken at
    that moment, said() in any, and a search, slice or join of it as text fails at once instead of freezing one
    language into a result."""
    message = t("{count} check(s) passed", count=2)
    assert not isinstance(message, str)
    assert (message.english, message.values) == ("{count} check(s) passed", {"count": 2})
    with speaking("zh"):
        made_in_chinese = t("{count} check(s) passed", count=2)
        assert str(made_in_chinese) == message.said("zh") != message.said("en")
    assert str(made_in_chinese) == "2 checks passed", "drawn where it is shown, in the language spoken there"
    for text_operation in (lambda: "passed" in message, lambda: message.startswith("2"), lambda: ", ".join([message])):
        with pytest.raises((TypeError, AttributeError)):
            text_operation()
    assert str(message + " · " + t("no table has this")) == "2 checks passed · no table has this"
