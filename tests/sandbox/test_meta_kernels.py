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


def test_without_sympy_the_same_kernels_say_the_same_and_the_helpers_answer_as_torchs_own():
    """symbolic_shapes' helpers on concrete sizes, answered without sympy (0.3 s): the same results and errors for
    every device mistake, sympy never imported; each helper equals torch's own on plain values, and a name the light
    module does not answer imports the real one."""
    plain = _run("import sys\n")
    light = _run("import sys\nfrom checker.sandbox import child\nchild.warm()\n"
                 "import atexit\natexit.register(lambda: print('sympy', type(sys.modules.get('sympy')).__name__, "
                 "file=sys.stderr))\n")
    assert light.returncode == 0, light.stderr
    assert light.stdout.splitlines()[:-1] == plain.stdout.splitlines()[:-1]
    assert "sympy _NoSympy" in light.stderr, "no real sympy was imported"
    probe = subprocess.run([sys.executable, "-c", """
import sys, torch
from checker.sandbox import meta_kernels as mk
mk.without_symbolic_shapes()
stub = sys.modules["sympy"]
assert not isinstance(1, stub.Basic) and torch.fx.experimental.symbolic_shapes is sys.modules[mk._SHAPES]
light = {name: mk._HELPERS[name] for name in mk._HELPERS}
values = [True, False, 0, 3, 7, (2, 3), [4, 5], (2, (3, 4))]
said = []
for name, helper in light.items():
    for v in values:  # as torch calls them: sym_eq with two, sym_and and sym_or with one or more, the rest with one
        for args in ((v, v), (v, True)) if name == "sym_eq" else ((v,), (v, v), (v, True)) if name in (
                "sym_and", "sym_or") else ((v,),):
            try:
                said.append((name, repr(args), 'ok', repr(helper(*args))))
            except Exception as err:
                said.append((name, repr(args), 'raises', type(err).__name__))
import torch.fx.experimental.symbolic_shapes as real
assert not isinstance(real, mk._Light) and real.ShapeEnv is not None  # any other name: the real module
import sympy
assert sympy is not stub and stub.Basic is sympy.Basic  # kept by someone, the light sympy now answers as sympy
for name, args, how, what in said:
    try:
        mine = 'ok', repr(getattr(real, name)(*eval(args)))
    except Exception as err:
        mine = 'raises', type(err).__name__
    if (how, what) != mine:
        print('DIFFERS', name, args, how, what, mine)
print('done', len(said))
"""], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert probe.returncode == 0 and "done" in probe.stdout and "DIFFERS" not in probe.stdout, probe.stdout + probe.stderr
