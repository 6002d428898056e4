"""Practise where you write: the Python API and the IPython extension, in a real kernel (nbclient) and in
IPython's real terminal."""

import os
import re
import subprocess
import sys

import pytest
from conftest import ROOT, run_json, run_kata, variant

import checker
from checker.app import report
from checker.state.progress import open_progress

WRONG = (variant("torch_attention", "wrong_missing_scale")).read_text(encoding="utf-8")
SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")

# A correct attention written as a notebook has it: under a name of its own, reading a constant and a
# helper defined in other cells.
NEG_CELL = 'NEG = float("-inf")  # a module-level constant of the notebook'
MY_CLASS = '''def scaled_scores(Q, K):
    return Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))


class MyClass(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        scores = scaled_scores(Q, K)
        if mask is not None:
            scores = scores.masked_fill(~mask, NEG)
        weights = scores.softmax(dim=-1)
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)
        return self.dropout(weights) @ V, weights
'''
BROKEN = '''class Broken(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()

    def forward(self, Q, K, V, mask=None):
        return undefined_helper(Q), Q
'''


def test_importing_checker_costs_no_torch():
    code = "import sys, checker; assert checker.check; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_check_takes_a_class_or_source_and_leaves_the_callers_torch_alone(tmp_path, workspace, monkeypatch):
    import torch

    monkeypatch.setenv("KATA_WORKSPACE", str(workspace))
    (tmp_path / "mine.py").write_text(WRONG, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "mine", raising=False)  # another test's mine.py may be imported in this worker
    from mine import ScaledDotProductAttention

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        verdict = checker.check("attention", ScaledDotProductAttention)
        assert torch.get_num_threads() == 3, "the check changed the caller's thread count"
    finally:
        torch.set_num_threads(before)
    assert verdict.status == "fail" and "1/√d_k" in verdict.diagnosis
    assert verdict.file == str(tmp_path / "mine.py"), "the report names your file, not the copy checked"
    assert {"status", "checks", "diagnosis", "stage", "error", "output"} <= set(report.as_json(verdict))
    assert checker.check("attention", source=SOLUTION).status == "pass"
    chinese = checker.check("attention", source=WRONG, lang="zh")
    assert "缩放" in chinese.diagnosis and "诊断" in chinese._repr_html_()
    assert str(chinese).count("缩放") == 1, "the diagnosis is drawn once, on its own line"
    with pytest.raises(TypeError):
        checker.check("attention")


def test_check_gathers_exactly_the_object_and_the_module_level_names_it_reads(tmp_path, monkeypatch):
    from checker.catalogue import find
    from checker.notebook import gather

    (tmp_path / "drafts.py").write_text(SOLUTION + "\n" + "\n".join([
        "import json  # read by nothing checked", NEG_CELL, "data = list(range(3))  # neither", MY_CLASS,
        "Alias = MyClass", "class MyWrong(ScaledDotProductAttention):", "    pass"]) + "\n", encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    import drafts

    code = gather(find("attention"), drafts.Alias).text
    assert code.count("class ") == 1 and "class MyClass(nn.Module)" in code, "only the object checked"
    assert code.rstrip().endswith("ScaledDotProductAttention = MyClass"), "placed under the contract's name"
    assert 'NEG = float("-inf")' in code and "def scaled_scores" in code and "import math" in code
    assert code.index("NEG =") < code.index("class MyClass"), "in the order it ran"
    assert "json" not in code and "data =" not in code and "__main__" not in code
    subclass = gather(find("attention"), drafts.MyWrong).text  # a class without methods, and what it extends
    assert subclass.index("class ScaledDotProductAttention") < subclass.index("class MyWrong")
    assert subclass.rstrip().endswith("ScaledDotProductAttention = MyWrong")
    several = gather(find("masks"), {"make_pad_mask": drafts.scaled_scores}).text
    assert "make_pad_mask = scaled_scores" in several
    with pytest.raises(ValueError, match="make_pad_mask"):
        gather(find("masks"), drafts.scaled_scores)  # which of the kata's names it is cannot be guessed


# ----------------------------------------------------------------------------- a real kernel

NOTEBOOK = "/somewhere/practice.ipynb"  # what JupyterLab tells the kernel (JPY_SESSION_NAME)
CELLS = ["%load_ext checker",
         SOLUTION,  # In[2]: a correct class under the contract's name, which must not be what gets checked
         WRONG.replace("class ScaledDotProductAttention", "class MyWrong"),  # In[3]
         NEG_CELL,  # In[4]
         MY_CLASS,  # In[5]
         BROKEN,  # In[6]
         "from checker import check\nwrong = check('attention', MyWrong)\nwrong",  # In[7]: its one output
         ("right = check('attention', MyClass)\nbroken = check('attention', Broken)\n"
          "print(wrong.status, '|', wrong.diagnosis, '|', right.status, '|', right.file, '|', right.checks[0].name)\n"
          "print(broken.error)"),
         "%%kata attention --lang=zh\n" + WRONG,  # its one output, in Chinese
         "%%kata attention --lang=fr\n" + WRONG,  # refused as `kata check` refuses it
         "%kata hint attention",
         "%kata quiz why-scale@3 --lang zh",  # In[12]: printed, since a kernel has no terminal to answer in
         "%kata quiz --answer why-scale@3 A"]


@pytest.fixture(scope="module")
def notebook(tmp_path_factory):
    """The cells above, run once in a real kernel; (cells with their outputs, the workspace)."""
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    ws = tmp_path_factory.mktemp("notebook") / "ws"
    assert run_kata("init", ws).returncode == 0
    with pytest.MonkeyPatch.context() as env:
        env.setenv("KATA_WORKSPACE", str(ws))
        env.setenv("NO_COLOR", "1")
        env.setenv("JPY_SESSION_NAME", NOTEBOOK)
        nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in CELLS])
        nbclient.NotebookClient(nb, timeout=300, kernel_name="python3", allow_errors=False).execute()
    return nb.cells, ws


def _text(cell) -> str:
    return " ".join(str(o.get("text", "")) + " ".join(map(str, o.get("data", {}).values())) for o in cell.outputs)


def test_check_in_a_kernel_checks_exactly_the_object_under_the_contracts_name_with_the_names_it_reads(notebook):
    cells, _ = notebook
    wrong, diagnosis, right, _, first_check = _text(cells[7]).split("\n")[0].split(" | ")
    assert wrong == "fail" and "1/√d_k" in diagnosis, "a correct class in an earlier cell does not pass MyWrong"
    assert right == "pass", "a correct class named MyClass, reading NEG and a helper from other cells, passes"
    assert "ScaledDotProductAttention" in first_check, "checked under the contract's name"
    # the traceback names the cell and its own line: `return undefined_helper(Q), Q` is line 6 of In[6]
    assert 'File "practice.ipynb · In[6]", line 6, in forward' in _text(cells[7])


def test_each_report_in_a_kernel_is_one_output_in_the_notebooks_own_colours(notebook):
    cells, _ = notebook
    for cell in (cells[6], cells[8]):  # check() as a cell's value, and %%kata
        assert len(cell.outputs) == 1, [o.output_type for o in cell.outputs]
        html = cell.outputs[0]["data"]["text/html"]
        assert html.startswith("<pre") and "<style" not in html and "<html" not in html.lower()
        assert "background" not in html and "#000000" not in html and "#ffffff" not in html, "no colour forced"
        assert "<span" in html, "its marks keep their colours"
    assert "Diagnosis" in _text(cells[6]) and "1/√d_k" in _text(cells[6])


def test_the_kata_magic_reads_its_options_as_the_command_line_does(notebook):
    cells, _ = notebook
    assert "诊断" in _text(cells[8]) and "缩放" in _text(cells[8]), "--lang=zh is --lang zh"
    refused = _text(cells[9])
    assert "usage: kata check" in refused and "'fr'" in refused and not any(
        o.output_type == "display_data" for o in cells[9].outputs), "a bad option is refused, nothing is checked"
    assert "Hint 1" in _text(cells[10])


def test_a_check_from_a_notebook_is_recorded_and_names_its_cell(notebook):
    cells, ws = notebook
    assert " | practice.ipynb · In[5] | " in _text(cells[7]), "the file is the notebook's cell"
    assert "practice.ipynb · In[3]" in _text(cells[6])
    assert not any("kata-check-" in _text(c) for c in cells), "no temporary path is shown"
    progress = open_progress(ws)
    try:
        checks = [c for c in progress.checks() if c["kata"] == "attention"]
    finally:
        progress.close()
    assert [c["status"] for c in checks] == ["fail", "pass", "fail", "fail"], "check() x3, then %%kata"
    assert all(c["file_hash"] for c in checks), "each with the hash of the code it checked"
    rows = {k["name"]: k for k in run_json("list", "--workspace", ws)[1]["katas"]}
    assert rows["attention"]["attempts"] == 4 and rows["attention"]["status"] == "fail"
    assert (ws / "torch" / "attention.py").read_text(encoding="utf-8").strip() == WRONG.strip(), "%%kata saves"
    assert list((ws / "backups").rglob("attention.py")), "the stub the cell replaced is kept"
    assert run_kata("stats", "--workspace", ws).returncode == 0


def test_a_result_in_ipythons_terminal_shows_as_the_report(workspace, tmp_path):
    """IPython's own terminal, its input piped: the value of check() prints as the report."""
    pytest.importorskip("IPython")
    blocks = [b.replace("\n\n", "\n") for b in MY_CLASS.strip().split("\n\n\n")]  # a blank line ends a block
    typed = "\n".join(["import math", "from torch import nn", NEG_CELL, *(b + "\n" for b in blocks),
                       "from checker import check", "check('attention', MyClass)", "exit", ""])
    env = {**os.environ, "KATA_WORKSPACE": str(workspace), "NO_COLOR": "1", "IPYTHONDIR": str(tmp_path / "ipython")}
    proc = subprocess.run([sys.executable, "-m", "IPython", "--no-banner", "--simple-prompt", "--colors=nocolor",
                           "--HistoryManager.hist_file=:memory:"], input=typed, capture_output=True,
                          text=True, timeout=300, env=env, check=False)
    out = proc.stdout
    assert re.search(r"Out\[\d+\]: \n╭─ +attention · PASS", out), out[-3000:]
    assert "In[" in out and "Verdict(" not in out and "CheckResult(" not in out, out[-3000:]


def test_the_quiz_in_a_kernel_prints_its_question_and_checks_an_answer_given_by_its_draw(notebook):
    cells, ws = notebook
    asked = _text(cells[11])
    assert "为什么" in asked and "why-scale@3" in asked and "kata quiz --answer why-scale@3" in asked
    answered = _text(cells[12])
    assert ("Right." in answered) != ("Not right" in answered) and "Source:" in answered
    stats = run_json("stats", "--workspace", ws)[1]
    assert stats["quiz"]["answered"] == 1, "the kernel's answer is recorded in the workspace"
