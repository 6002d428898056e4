"""Off-limits shortcuts are found in the source however they are imported."""

import pytest

from checker.sandbox.rules import MAKERS, makes_tensors, scan

SDPA = ("torch.nn.functional.scaled_dot_product_attention", "torch.nn.MultiheadAttention")


@pytest.mark.parametrize("source, line", [
    ("import torch.nn.functional as F\ny = F.scaled_dot_product_attention(q, k, v)", 2),
    ("import torch\ny = torch.nn.functional.scaled_dot_product_attention(q, k, v)", 2),
    ("from torch.nn.functional import scaled_dot_product_attention as f\n", 1),
    ("from torch.nn import functional\nfunctional.scaled_dot_product_attention", 2),
    ("from torch import nn\nm = nn.MultiheadAttention(8, 2)", 2),
])
def test_forbidden_use_is_found_with_its_line(source, line):
    found = scan(source, SDPA)
    assert found and found[0][0] == line


def test_allowed_code_is_not_flagged():
    assert scan("import torch\nimport torch.nn.functional as F\ny = F.softmax(x, -1)\n", SDPA) == []


def test_a_whole_module_can_be_off_limits():
    assert scan("import numpy as np\nimport torch\n", ("torch",)) == [(2, "torch")]
    assert scan("from torch import tensor\n", ("torch",)) == [(1, "torch")]


# ----------------------------------------------------------------------------- tensors made from nothing

HEAD = "import math\nimport torch\nimport torch.nn.functional as F\nfrom torch import Tensor, nn\n\n"


@pytest.mark.parametrize("body", [
    "def f(x):\n    return x.masked_fill(torch.ones(3, 3, dtype=torch.bool).tril(), 0.0)",
    "from torch import ones\ndef f(x):\n    return x * ones(3)",
    "from torch import arange as ar\ndef f(x):\n    return x + ar(3)",
    "def f(x):\n    return x / torch.tensor(math.sqrt(x.size(-1)))",
    "def f(x):\n    return x.cpu()",
    "def f(x):\n    return x.to('cpu')",
    "DEVICE = 'cuda:0'\ndef f(x):\n    return x",
    "def f(x):\n    return x.to(torch.device(x.device.type))",
    "def f(x):\n    return x + torch.FloatTensor([1.0])",
    "import numpy as np\ndef f(x):\n    return x * np.sqrt(2)",
    "from .helpers import mask\ndef f(x):\n    return mask(x)",
    "def f(x):\n    return getattr(torch, 'on' + 'es')(3)",
    "class M(nn.Module):\n    def forward(self, x):\n        return nn.Linear(x.size(-1), 2)(x)",
    "class M(nn.Module):\n    def __init__(self):\n        super().__init__()\n        self.pe = torch.zeros(8, 4)",
    "def f(x, mask=torch.ones(3, 3)):\n    return x",
    "PROJ = nn.Linear(4, 4)\ndef f(x):\n    return PROJ(x)",
    "class M(nn.Module):\n    norm = nn.LayerNorm(4)\n    def forward(self, x):\n        return self.norm(x)",
    "class M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n"
    "        self.layers = [nn.Linear(d, d) for _ in range(2)]  # a plain list: .to() never sees them\n"
    "    def forward(self, x):\n        return self.layers[1](self.layers[0](x))",
    "class M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        heads = {'q': nn.Linear(d, d)}\n"
    "        self.heads = heads",
])
def test_code_that_may_make_a_tensor_itself_gets_the_device_check(body):
    assert makes_tensors(HEAD + body)


@pytest.mark.parametrize("body", [
    "def f(x: Tensor, mask: Tensor | None = None) -> Tensor:\n    s = x @ x.transpose(-2, -1) / math.sqrt(x.size(-1))\n"
    "    return s.masked_fill(~mask, float('-inf')).softmax(-1) if mask is not None else s",
    "def f(x):\n    return x.new_ones(3, 3).tril() * torch.zeros_like(x[..., :1]) + x.to(x.dtype)",
    "def f(x):\n    return torch.ones_like(x, device=x.device)",
    "class M(nn.Module):\n    def __init__(self, d):\n        super().__init__()\n        self.proj = nn.Linear(d, d)\n"
    "        self.w = nn.Parameter(torch.empty(0).new_empty(0)) if False else None\n"
    "    def forward(self, x):\n        return self.proj(x)",
    "def f(x):\n    for i in range(3):\n        x = F.relu(x)\n    return x",
    "class M(nn.Module):\n    def __init__(self, d, n):\n        super().__init__()\n"
    "        self.layers = nn.ModuleList([nn.Linear(d, d) for _ in range(n)])\n"
    "        self.ffn = nn.Sequential(nn.Linear(d, 2 * d), nn.ReLU(), nn.Linear(2 * d, d))\n"
    "        self.norm: nn.LayerNorm = nn.LayerNorm(d)\n        self.add_module('extra', nn.Identity())\n"
    "    def forward(self, x):\n        return self.norm(self.ffn(x))",
])
def test_code_whose_tensors_all_come_from_its_inputs_skips_it(body):
    assert not makes_tensors(HEAD + body.replace("torch.empty(0).new_empty(0)", "x"))


def test_the_makers_list_covers_every_torch_function_that_takes_a_device():
    """Every function of torch (and its namespaces) with a device parameter is in MAKERS, except the
    ones that follow a tensor argument (x.new_ones, torch.zeros_like, x.to)."""
    import inspect

    import torch
    import torch.nn.functional as F
    import torch.signal.windows

    def takes_device(obj) -> bool:
        doc = obj.__doc__ if isinstance(getattr(obj, "__doc__", None), str) else ""
        try:
            if "device" in inspect.signature(obj).parameters:
                return True
        except (TypeError, ValueError):
            pass
        return "device (" in doc or "device=" in doc[:400]

    found = set()
    for space in (torch, F, torch.Tensor, torch.fft, torch.special, torch.linalg, torch.nn.Transformer,
                  torch.nn.init, torch.signal.windows):
        for name in dir(space):
            obj = getattr(space, name, None)
            if not name.startswith("__") and callable(obj) and takes_device(obj):
                found.add(name)
    follows = {n for n in found if n.endswith("_like") or n.startswith("new_")} | {"to", "get_device",
                                                                                    "get_device_module"}
    missing = sorted(n for n in found - follows - MAKERS if not n.endswith(("Tensor", "Storage")))
    assert not missing, missing


def test_every_file_that_makes_no_tensor_passes_the_device_check_when_run():
    """The skip changes no verdict: each solution and variant, right or wrong, of a kata with the device
    check, that makes_tensors() says holds only its inputs' tensors, passes the check run on the meta device."""
    import importlib

    from conftest import ROOT

    from checker import catalogue, engine
    from checker import kit as kitmod
    from checker.errors import UserError
    from checker.sandbox.parent import Sandbox

    engine.warm_up()  # the meta kernels, imported once here rather than in each of ~100 forked children (1-3 s each)
    ran = 0
    for kata in catalogue.all_katas():
        spec = importlib.import_module(kata.checks_module)
        if not getattr(spec, "DEVICE", False) or kata.track != "torch":
            continue
        device = next(fn for fn in kitmod.standard_checks(spec) if fn.__name__ == "device")
        files = [ROOT / "solutions" / kata.file, *sorted((kata.folder / "variants").glob("*.py"))]
        for path in files:
            if makes_tensors(path.read_text(encoding="utf-8")):
                continue
            with Sandbox(path, 60) as sandbox:
                try:
                    sandbox.request("load")
                except UserError:
                    continue
                device(kitmod.Kit(spec, sandbox, engine.load_solution(kata)))  # raises Fail if it fails
                ran += 1
    assert ran >= 60, ran
