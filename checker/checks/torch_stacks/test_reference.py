"""The reference Encoder/Decoder agree with torch.nn.TransformerEncoder/TransformerDecoder, in float64.

nn.TransformerEncoder(nn.TransformerEncoderLayer(..., norm_first=False, relu, dropout=0), N,
norm=nn.LayerNorm(D)) is the same stack: N deep copies of a post-LN layer and a final LayerNorm.
Each of our layers' weights is mapped onto the built-in's layer of the same index (different
weights per layer). Their boolean masks mean the opposite of ours: True = NOT allowed.
Also: the given classes in the stub, the reference and checker/checks/child/layers.py are exact copies
of the references of their own katas.
"""

import ast

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_stacks import checks as spec
from checker.catalogue import KATAS, PACKAGE, SOLUTIONS

solution = engine.load_solution(catalogue.find("stacks"))


def _perturbed(module, seed):
    torch.manual_seed(seed)
    module = module.double().eval()
    with torch.no_grad():  # every layer gets its own weights; LayerNorms move away from 1 and 0
        for p in module.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return module


def _load_mha(theirs: nn.MultiheadAttention, mha) -> None:
    theirs.in_proj_weight.copy_(torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([mha.W_q.bias, mha.W_k.bias, mha.W_v.bias]))
    theirs.out_proj.weight.copy_(mha.W_o.weight)
    theirs.out_proj.bias.copy_(mha.W_o.bias)


def _load_common(theirs_layer, ours_layer, norms):
    _load_mha(theirs_layer.self_attn, ours_layer.self_attn)
    theirs_layer.linear1.load_state_dict(ours_layer.ffn.fc1.state_dict())
    theirs_layer.linear2.load_state_dict(ours_layer.ffn.fc2.state_dict())
    for i in range(1, norms + 1):
        getattr(theirs_layer, f"norm{i}").load_state_dict(getattr(ours_layer, f"norm{i}").state_dict())


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_encoder_matches_nn_transformer_encoder(c):
    ours = _perturbed(solution.Encoder(solution.EncoderLayer(c.D, c.H, c.d_ff), c.N), c.id)
    layer = nn.TransformerEncoderLayer(c.D, c.H, dim_feedforward=c.d_ff, dropout=0.0, activation="relu",
                                       batch_first=True, norm_first=False, dtype=torch.float64)
    theirs = nn.TransformerEncoder(layer, c.N, norm=nn.LayerNorm(c.D, dtype=torch.float64),
                                   enable_nested_tensor=False).eval()
    with torch.no_grad():
        for t, o in zip(theirs.layers, ours.layers):
            _load_common(t, o, norms=2)
        theirs.norm.load_state_dict(ours.norm.state_dict())
    x, src_mask = spec.inputs(c, "float64")
    key_padding = None if src_mask is None else ~src_mask[:, 0, 0, :]  # (B, 1, 1, T_s) -> (B, T_s), True = PAD
    with torch.no_grad():
        got = ours(x, src_mask)
        want = theirs(x, src_key_padding_mask=key_padding)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec._DECODER_CASES, ids=lambda c: c.label)
def test_decoder_matches_nn_transformer_decoder(c):
    ours = _perturbed(solution.Decoder(solution.DecoderLayer(c.D, c.H, c.d_ff), c.N), c.id)
    layer = nn.TransformerDecoderLayer(c.D, c.H, dim_feedforward=c.d_ff, dropout=0.0, activation="relu",
                                       batch_first=True, norm_first=False, dtype=torch.float64)
    theirs = nn.TransformerDecoder(layer, c.N, norm=nn.LayerNorm(c.D, dtype=torch.float64)).eval()
    with torch.no_grad():
        for t, o in zip(theirs.layers, ours.layers):
            _load_common(t, o, norms=3)
            _load_mha(t.multihead_attn, o.cross_attn)
        theirs.norm.load_state_dict(ours.norm.state_dict())
    y, memory, tgt_mask, memory_mask = spec.decoder_inputs(c)
    attn_mask = (~tgt_mask).expand(c.B, c.H, c.T_t, c.T_t).reshape(c.B * c.H, c.T_t, c.T_t)
    key_padding = None if memory_mask is None else ~memory_mask[:, 0, 0, :]
    with torch.no_grad():
        got = ours(y, memory, tgt_mask, memory_mask)
        want = theirs(y, memory, tgt_mask=attn_mask, memory_key_padding_mask=key_padding)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)


def test_layers_are_independent_copies():
    """Changing one layer's weights leaves the others alone (deepcopy, not the same object N times)."""
    stack = solution.Encoder(solution.EncoderLayer(8, 2, 6), 3)
    with torch.no_grad():
        stack.layers[0].self_attn.W_q.weight.zero_()
    assert stack.layers[1].self_attn.W_q.weight.abs().sum() > 0
    assert len({id(p) for p in stack.parameters()}) == len(list(stack.named_parameters()))


def _class_sources(path) -> dict:
    text = path.read_text(encoding="utf-8")
    return {n.name: ast.get_source_segment(text, n) for n in ast.parse(text).body if isinstance(n, ast.ClassDef)}


GIVEN = {"MultiHeadAttention": "multi_head_attention", "FeedForward": "feed_forward",
         "EncoderLayer": "encoder_layer", "DecoderLayer": "decoder_layer"}


@pytest.mark.parametrize("path", [KATAS / "torch/stacks.py", SOLUTIONS / "torch/stacks.py",
                                  PACKAGE / "checks" / "child" / "layers.py"], ids=lambda p: p.name)
def test_given_classes_are_the_references_of_their_katas(path):
    classes = _class_sources(path)
    for name, kata in GIVEN.items():
        assert classes[name] == _class_sources(SOLUTIONS / f"torch/{kata}.py")[name], \
            f"{path}: {name} differs from solutions/torch/{kata}.py"
