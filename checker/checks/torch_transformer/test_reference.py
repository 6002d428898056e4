"""The reference Transformer agrees with torch.nn.Transformer (weights mapped), in float64.

nn.Transformer(batch_first=True, norm_first=False, activation="relu") is seed 003's post-LN
encoder-decoder, except that its encoder and decoder end with a final LayerNorm, which seed 003
(and this kata) do not have: the test removes them (`encoder.norm = decoder.norm = None`, which
nn.TransformerEncoder/Decoder skip) rather than trying to make a LayerNorm act as the identity.
Embeddings, positional encoding and the output projection are ours, shared by both sides.
"""

import ast
from pathlib import Path

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.child import transformer as fixtures
from checker.checks.torch_transformer import checks as spec
from checker.kit import Kit

solution = engine.load_solution(catalogue.find("transformer"))


def _attention(theirs: nn.MultiheadAttention, ours) -> None:
    theirs.in_proj_weight.copy_(torch.cat([ours.W_q.weight, ours.W_k.weight, ours.W_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([ours.W_q.bias, ours.W_k.bias, ours.W_v.bias]))
    theirs.out_proj.weight.copy_(ours.W_o.weight)
    theirs.out_proj.bias.copy_(ours.W_o.bias)


def _sublayers(theirs, ours, norms) -> None:
    theirs.linear1.load_state_dict(ours.ffn.fc1.state_dict())
    theirs.linear2.load_state_dict(ours.ffn.fc2.state_dict())
    for n in norms:
        getattr(theirs, n).load_state_dict(getattr(ours, n).state_dict())


def builtin_from(ours, c) -> nn.Transformer:
    theirs = nn.Transformer(d_model=c.D, nhead=c.H, num_encoder_layers=c.N, num_decoder_layers=c.N,
                            dim_feedforward=c.d_ff, dropout=0.0, activation="relu", batch_first=True,
                            norm_first=False, dtype=torch.float64)
    theirs.encoder.norm = None  # seed 003 has no final LayerNorm after the stacks
    theirs.decoder.norm = None
    with torch.no_grad():
        for t, o in zip(theirs.encoder.layers, ours.encoder_layers):
            _attention(t.self_attn, o.self_attn)
            _sublayers(t, o, ("norm1", "norm2"))
        for t, o in zip(theirs.decoder.layers, ours.decoder_layers):
            _attention(t.self_attn, o.self_attn)
            _attention(t.multihead_attn, o.cross_attn)
            _sublayers(t, o, ("norm1", "norm2", "norm3"))
    return theirs.eval()


@pytest.mark.filterwarnings("ignore:The PyTorch API of nested tensors")  # its encoder's fast path, eval mode
@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_nn_transformer(c):
    ours = solution.Transformer(**spec.init(c)).double()
    ours.load_state_dict(Kit(spec, None, solution).state(c, "float64"))  # the checks' weights, moved off init
    ours.eval()
    src, tgt = spec.inputs(c, "float64")
    theirs = builtin_from(ours, c)
    T_t = tgt.size(1)
    with torch.no_grad():
        want = ours(src, tgt)
        # Their boolean masks mean the opposite of ours: True = NOT allowed.
        hidden = theirs(ours.pos_enc(ours.src_embed(src)), ours.pos_enc(ours.tgt_embed(tgt)),
                        tgt_mask=torch.ones(T_t, T_t, dtype=torch.bool).triu(1),
                        src_key_padding_mask=src == c.pad_id, tgt_key_padding_mask=tgt == c.pad_id,
                        memory_key_padding_mask=src == c.pad_id)
        got = ours.out_proj(hidden)
    torch.testing.assert_close(want, got, rtol=1e-10, atol=1e-10)


def test_builtin_bool_masks_mean_not_allowed():
    """The convention translated above, checked by running: True in tgt_mask hides a key (the future)."""
    torch.manual_seed(0)
    theirs = nn.Transformer(d_model=4, nhead=2, num_encoder_layers=1, num_decoder_layers=1, dim_feedforward=8,
                            dropout=0.0, batch_first=True, dtype=torch.float64).eval()
    src, tgt = torch.randn(1, 3, 4, dtype=torch.float64), torch.randn(1, 5, 4, dtype=torch.float64)
    hide_future = torch.ones(5, 5, dtype=torch.bool).triu(1)
    changed = tgt.clone()
    changed[:, 3:] += 1.0
    with torch.no_grad():
        a, b = theirs(src, tgt, tgt_mask=hide_future), theirs(src, changed, tgt_mask=hide_future)
    torch.testing.assert_close(a[:, :3], b[:, :3])


def _classes(path) -> dict[str, str]:
    source = Path(path).read_text(encoding="utf-8")
    return {n.name: ast.get_source_segment(source, n) for n in ast.parse(source).body if isinstance(n, ast.ClassDef)}


def _code(path) -> dict[str, str]:
    """Each class's code, comments and layout aside."""
    return {n.name: ast.unparse(n) for n in ast.parse(Path(path).read_text(encoding="utf-8")).body
            if isinstance(n, ast.ClassDef)}


def test_fixture_classes_are_copies_of_the_reference():
    """The greedy and copy-task models are the reference's classes (the layers come from checker/checks/child/layers.py)."""
    ours = _code(solution.__file__)
    copied = {**_code(Path(fixtures.__file__).with_name("layers.py")), **_code(fixtures.__file__)}
    for name in ("PositionalEncoding", "MultiHeadAttention", "FeedForward", "EncoderLayer", "DecoderLayer", "Transformer"):
        assert copied[name] == ours[name], f"{name} in checker/checks/child/ differs from the reference"


def test_stub_gives_the_reference_building_blocks():
    """The stub's given classes are the reference's, unchanged."""
    stub = _classes(Path(solution.__file__).parents[2] / "katas" / "torch" / "transformer.py")
    ours = _classes(solution.__file__)
    for name in ("PositionalEncoding", "MultiHeadAttention", "FeedForward", "EncoderLayer", "DecoderLayer"):
        assert stub[name] == ours[name], name


@pytest.mark.parametrize("name, kata", [("PositionalEncoding", "positional_encoding"),
                                        ("MultiHeadAttention", "multi_head_attention"),
                                        ("FeedForward", "feed_forward"), ("EncoderLayer", "encoder_layer"),
                                        ("DecoderLayer", "decoder_layer")])
def test_given_blocks_are_the_other_katas_references(name, kata):
    """The building blocks given in the transformer kata are the references of the katas that teach them."""
    folder = Path(solution.__file__).parent
    assert _classes(solution.__file__)[name] == _classes(folder / f"{kata}.py")[name]


def _logits(impl):
    k = Kit(spec, None, solution)
    return [k.reference(spec.inputs(c, "float64"), case=c, impl=impl) for c in spec.CASES]


@pytest.mark.parametrize("convention", spec.CONVENTIONS, ids=lambda c: c.name)
def test_an_accepted_convention_opens_no_door_to_a_named_mistake(convention):
    """Each convention changes the logits (so it is named), and no named mistake equals it on every case."""
    from checker.kit import matches

    accepted = _logits(convention.impl)
    assert not all(matches(a, r) for a, r in zip(accepted, _logits(None)))
    for mistake in spec.MISTAKES:
        try:
            wrong = _logits(mistake.impl)
        except IndexError:  # src_embed on target ids out of its range: it raises, so it equals nothing
            continue
        assert not all(matches(w, a, convention.tol) for w, a in zip(wrong, accepted)), mistake.name


def test_seed003_masks_change_only_the_logits_at_pad_target_positions():
    """Why hiding the PAD query rows is a convention, not a mistake: every real position is unchanged."""
    (_, seed003) = spec.CONVENTIONS
    for c, ours, theirs in zip(spec.CASES, _logits(None), _logits(seed003.impl)):
        real = spec.inputs(c, "float64")[1] != c.pad_id  # (B, T_t)
        torch.testing.assert_close(theirs[real], ours[real], rtol=1e-9, atol=1e-10)
