"""Practise where you write: the Python API and the IPython extension, in a real kernel (nbclient)."""

import subprocess
import sys

import pytest
import checker
from checker import report
from conftest import ROOT, run_json, run_kata, variant

WRONG = (variant("torch_attention", "wrong_missing_scale")).read_text(encoding="utf-8")
SOLUTION = (ROOT / "solutions" / "torch" / "attention.py").read_text(encoding="utf-8")


def test_importing_checker_costs_no_torch():
    code = "import sys, checker; assert checker.check; print('torch' in sys.modules)"
    assert subprocess.run([sys.executable, "-c", code], capture_output=True, text=True).stdout.strip() == "False"


def test_check_takes_a_class_or_source_and_leaves_the_callers_torch_alone(tmp_path, monkeypatch):
    import torch

    (tmp_path / "mine.py").write_text(WRONG, encoding="utf-8")
    monkeypatch.syspath_prepend(str(tmp_path))
    from mine import ScaledDotProductAttention

    before = torch.get_num_threads()
    torch.set_num_threads(3)
    try:
        verdict = checker.check("attention", ScaledDotProductAttention)
        assert torch.get_num_threads() == 3, "the check changed the caller's thread count"
    finally:
        torch.set_num_threads(before)
    assert verdict.status == "fail" and "1/√d_k" in verdict.diagnosis
    assert {"status", "checks", "diagnosis", "stage", "error", "output"} <= set(report.as_json(verdict))
    assert checker.check("attention", source=SOLUTION).status == "pass"
    chinese = checker.check("attention", source=WRONG, lang="zh")
    assert "缩放" in chinese.diagnosis and "诊断" in chinese._repr_html_()
    with pytest.raises(TypeError):
        checker.check("attention")


def test_definitions_keep_what_the_cells_define_and_drop_what_they_run():
    from checker.notebook import definitions

    cells = ["import torch\nfrom torch import nn", "x = torch.randn(3)\nprint(x)",
             "class A(nn.Module):\n    pass", "%timeit 1 + 1\ndef helper():\n    return 1",
             "class A(nn.Module):\n    def forward(self, x):\n        return helper() * x"]
    code = definitions(cells, "A")
    assert "print(x)" not in code and "timeit" not in code and code.count("class A") == 1
    assert "return helper() * x" in code and code.index("def helper") < code.index("class A")
    with pytest.raises(ValueError, match="no cell defines"):
        definitions(cells, "Missing")


def _run_notebook(cells, workspace, monkeypatch, timeout=300):
    nbformat = pytest.importorskip("nbformat")
    nbclient = pytest.importorskip("nbclient")
    monkeypatch.setenv("KATA_WORKSPACE", str(workspace))
    monkeypatch.setenv("NO_COLOR", "1")
    nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(c) for c in cells])
    nbclient.NotebookClient(nb, timeout=timeout, kernel_name="python3", allow_errors=False).execute()
    return [" ".join(str(o.get("text", "")) + " ".join(map(str, o.get("data", {}).values())) for o in cell.outputs)
            for cell in nb.cells]


def test_a_kata_cell_in_a_real_kernel_shows_the_diagnosis_and_counts_in_the_history(workspace, monkeypatch):
    outputs = _run_notebook(["%load_ext checker", "%%kata attention\n" + WRONG, "%kata hint attention",
                             "%%kata attention --lang zh\n" + WRONG,
                             "import checker\n" + WRONG + "\nprint(checker.check('attention', ScaledDotProductAttention)"
                             ".diagnosis)"], workspace, monkeypatch)
    assert "Diagnosis" in outputs[1] and "1/√d_k" in outputs[1], outputs[1][:500]
    assert "Hint 1" in outputs[2]
    assert "诊断" in outputs[3]
    assert "1/√d_k" in outputs[4], "check() finds a class defined in a cell"
    assert (workspace / "torch" / "attention.py").read_text(encoding="utf-8") == WRONG + "\n" or \
        (workspace / "torch" / "attention.py").read_text(encoding="utf-8").strip() == WRONG.strip()
    rows = {k["name"]: k for k in run_json("list", "--workspace", workspace)[1]["katas"]}
    assert rows["attention"]["attempts"] == 2 and rows["attention"]["status"] == "fail"
    assert list((workspace / "backups").rglob("attention.py")), "the stub the cell replaced is kept"
    assert run_kata("stats", "--workspace", workspace).returncode == 0
