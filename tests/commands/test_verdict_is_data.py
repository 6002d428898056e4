"""A verdict is data (issue 37, item 1): no check and no view reads a message's drawn text back, in either language.

Outside the language module and the renderer (checker/lang.py, checker/app/report.py, checker/app/terminal.py), the checker's
Python is read as a syntax tree: no regular expression is applied to a message or a diagnosis (a check's, a
failure's, or a name assigned from one), no pattern holds Chinese, and no text is looked for inside a message with
`in`. The user's own error text (err.message, the traceback) is the user's data and may be read.
"""

import ast
import re

from conftest import CHECKS, checker_modules

DRAWERS = {"lang.py", "app/report.py", "app/terminal.py"}  # the language module and the renderer
ANSWERS = "quiz"  # checker/quiz reads what the user types in either language (a Chinese comma, 字节): no message
_REGEX = {"compile", "search", "match", "fullmatch", "findall", "finditer", "sub", "subn", "split"}
_TEXT = {"message", "diagnosis"}
_CHINESE = re.compile(r"[\u3000-\u303f\u4e00-\u9fff\uff00-\uffef]")


def _reads_a_message(node, names: set) -> bool:
    """node mentions a message or diagnosis of kata's: c.message, fail.diagnosis (not err.message, the user's
    error text), or a name assigned from one."""
    for n in ast.walk(node):
        if isinstance(n, ast.Attribute) and n.attr in _TEXT and not (isinstance(n.value, ast.Name)
                                                                     and n.value.id in ("err", "error")):
            return True
        if isinstance(n, ast.Name) and n.id in names:
            return True
    return False


def _problems(path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    compiled = {t.id for n in ast.walk(tree) if isinstance(n, ast.Assign) and isinstance(n.value, ast.Call)
                and ast.unparse(n.value.func) == "re.compile" for t in n.targets if isinstance(t, ast.Name)}
    for scope in (n for n in ast.walk(tree) if isinstance(n, ast.Module | ast.FunctionDef | ast.AsyncFunctionDef)):
        names = set() if isinstance(scope, ast.Module) else {
            t.id for n in ast.walk(scope) if isinstance(n, ast.Assign) and _reads_a_message(n.value, set())
            for target in n.targets for t in getattr(target, "elts", [target]) if isinstance(t, ast.Name)}
        for n in ast.walk(scope):
            if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _REGEX \
                    and isinstance(n.func.value, ast.Name) and n.func.value.id in {"re", *compiled}:
                module_call = n.func.value.id == "re"
                pattern, texts = (n.args[:1], n.args[1:]) if module_call else ([], n.args)
                if any(isinstance(p, ast.Constant) and isinstance(p.value, str) and _CHINESE.search(p.value)
                       for p in pattern):
                    found.append(f"{path}:{n.lineno}: a pattern holds Chinese")
                if module_call and n.func.attr != "compile" or not module_call and n.func.attr != "split":
                    if any(_reads_a_message(t, names) for t in texts):
                        found.append(f"{path}:{n.lineno}: a regular expression over a message")
            if isinstance(n, ast.Compare) and any(isinstance(op, ast.In | ast.NotIn) for op in n.ops) \
                    and isinstance(n.left, ast.Constant | ast.JoinedStr) \
                    and any(_reads_a_message(c, names) for c in n.comparators):
                found.append(f"{path}:{n.lineno}: text looked for inside a message")
    return sorted(set(found))


def test_no_check_or_view_outside_the_renderer_parses_a_message():
    paths = [p for p in checker_modules() if p.relative_to(CHECKS.parent).as_posix() not in DRAWERS
             and ANSWERS not in p.relative_to(CHECKS.parent).parts]
    problems = [line for p in paths for line in _problems(p)]
    assert not problems, "\n".join(problems)


def test_the_scan_finds_what_it_forbids(tmp_path):
    """The three shapes it refuses, as written before issue 37 (the engine's folding, a kata's check)."""
    sample = tmp_path / "sample.py"
    sample.write_text("import re\n"
                      "_ERROR = re.compile(r'Error(?:: |：)')\n"
                      "def fold(c):\n"
                      "    return re.sub(r'\\d', '#', str(c.message))\n"
                      "def check(fail):\n"
                      "    text = fail.message\n"
                      "    return 'no parameter' in text\n"
                      "def user(err):\n"
                      "    return 'overflow' in err.message\n", encoding="utf-8")
    assert [p.split(": ", 1)[1] for p in _problems(sample)] == [
        "a pattern holds Chinese", "a regular expression over a message", "text looked for inside a message"]


def test_a_file_that_passes_names_no_mistake():
    """A file that follows an accepted convention (AWQ's unstretched range beside GPTQ's) passes; the error model may
    have run on a comparison before the convention was settled, and its sentence must not reach the verdict."""
    from checker import catalogue, engine

    from conftest import CHECKS

    kata = catalogue.find("quantize_int4")
    result = engine.check_file(kata, CHECKS / "torch_quantize_int4" / "variants" / "right_awq.py", timed=False)
    assert result.status == "pass" and result.diagnosis is None, result.diagnosis
