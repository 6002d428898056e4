"""Off-limits shortcuts are found in the source however they are imported."""

import pytest

from checker.checks.rules import scan

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
