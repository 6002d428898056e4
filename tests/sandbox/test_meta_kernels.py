"""The device check's meta kernels without torch._dynamo (checker.sandbox.meta_kernels): the same kernels run and
say the same things, and a fresh process pays about 0.3 s for them instead of 1.1 s."""

import subprocess
import sys

from conftest import ROOT

# Device mistakes as the user's code makes them, each through a kernel torch writes in Python (torch._refs,
# a meta registration) and one in C++: the error each raises on the meta device, or the device it returns.
MISTAKES = """
import torch
x = torch.randn(2, 3, 5, 7, device="meta")
cpu_mask = torch.ones(5, 7, dtype=torch.bool).tril()
for name, fn in [
    ("masked_fill with a CPU mask", lambda: x.masked_fill(~cpu_mask, float("-inf"))),
    ("where with a CPU mask", lambda: torch.where(cpu_mask, x, 0.0)),
    ("matmul with a CPU matrix", lambda: x @ torch.ones(7, 4)),
    ("add a CPU tensor", lambda: x + torch.ones(5, 7)),
    ("a CPU scale", lambda: x / torch.tensor(2.0).sqrt()),
    ("softmax then tril", lambda: x.softmax(-1).tril()),
]:
    try:
        out = fn()
        print(name, "->", out.device, tuple(out.shape))
    except Exception as err:
        print(name, "raises", type(err).__name__, str(err).splitlines()[0])
"""


def _run(prologue: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", prologue + MISTAKES + "print(sorted(m for m in sys.modules if "
                           "m.startswith('torch._dynamo'))[:1])"], cwd=ROOT, capture_output=True, text=True,
                          timeout=120)


def test_the_meta_kernels_say_the_same_without_importing_torch_dynamo():
    plain = _run("import sys\n")
    marked = _run("import sys\nfrom checker.sandbox import child\nchild.warm()\n")
    assert plain.returncode == 0 and marked.returncode == 0, plain.stderr + marked.stderr
    *said_plain, dynamo_plain = plain.stdout.splitlines()
    *said_marked, dynamo_marked = marked.stdout.splitlines()
    assert said_marked == said_plain, "the same result or error for every mistake"
    assert any("raises" in line for line in said_plain) and any("-> meta" in line for line in said_plain)
    assert dynamo_plain == "['torch._dynamo']", "torch imports it on its own: the test still tests something"
    assert dynamo_marked == "[]"
