"""The reference AddNorm agrees with PyTorch: each order against nn.LayerNorm written out, and two
AddNorms around self-attention and an FFN equal nn.TransformerEncoderLayer with norm_first=False
(post-LN) and norm_first=True (pre-LN), weights mapped, in float64."""

import pytest
import torch
import torch.nn.functional as F
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_add_norm import checks as spec

solution = engine.load_solution(catalogue.find("add_norm"))


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_each_order_is_its_formula_with_nn_layernorm(c):
    torch.manual_seed(c.id)
    ours = solution.AddNorm(**spec.init(c)).double().eval()
    with torch.no_grad():
        ours.norm.weight.normal_()
        ours.norm.bias.normal_()
    theirs = nn.LayerNorm(c.D, eps=getattr(c, "eps", 1e-5), dtype=torch.float64)
    theirs.load_state_dict(ours.norm.state_dict())
    x, sublayer = spec.inputs(c, "float64")
    with torch.no_grad():
        want = x + sublayer(theirs(x)) if spec._pre(c) else theirs(x + sublayer(x))
        torch.testing.assert_close(ours(x, sublayer), want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("norm_first", [False, True], ids=["post-LN", "pre-LN"])
def test_two_addnorms_are_nn_transformer_encoder_layer(norm_first):
    torch.manual_seed(0)
    B, T, D, H, d_ff = 3, 5, 12, 3, 20
    theirs = nn.TransformerEncoderLayer(D, H, d_ff, dropout=0.0, batch_first=True, norm_first=norm_first,
                                        activation="relu", dtype=torch.float64).eval()
    with torch.no_grad():  # move LayerNorm off gamma=1, beta=0 so a swapped norm shows
        for p in list(theirs.norm1.parameters()) + list(theirs.norm2.parameters()):
            p.normal_()
    first = solution.AddNorm(D, pre_norm=norm_first).double().eval()
    second = solution.AddNorm(D, pre_norm=norm_first).double().eval()
    first.norm.load_state_dict(theirs.norm1.state_dict())
    second.norm.load_state_dict(theirs.norm2.state_dict())

    def attention(h):
        return theirs.self_attn(h, h, h, need_weights=False)[0]

    def ffn(h):
        return theirs.linear2(F.relu(theirs.linear1(h)))

    x = torch.randn(B, T, D, dtype=torch.float64)
    with torch.no_grad():
        torch.testing.assert_close(second(first(x, attention), ffn), theirs(x), rtol=1e-12, atol=1e-12)


def test_dropout_only_in_training():
    c = spec.CASES[0]
    layer = solution.AddNorm(c.D, dropout=0.5).double()
    x, sublayer = spec.inputs(c, "float64")
    with torch.no_grad():
        assert not torch.equal(layer.train()(x, sublayer), layer.eval()(x, sublayer))
        assert torch.equal(layer.eval()(x, sublayer), layer.norm(x + sublayer(x)))
