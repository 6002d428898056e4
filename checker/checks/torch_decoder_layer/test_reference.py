"""The reference DecoderLayer agrees with torch.nn.TransformerDecoderLayer (weights mapped), in float64.

nn.TransformerDecoderLayer(batch_first=True, norm_first=False, activation="relu", dropout=0) is the
same post-LN layer. Weights: self_attn.in_proj = cat(W_q, W_k, W_v), out_proj = W_o; the same for
multihead_attn <- cross_attn; linear1/linear2 <- ffn.fc1/ffn.fc2; norm1..3 <- norm1..3.
Masks: its boolean masks mean the opposite of ours (True = NOT allowed); tgt_mask becomes a
(B*H, T_t, T_t) attn mask, memory_mask (B, 1, 1, T_s) a (B, T_s) memory_key_padding_mask.
"""

import ast

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_decoder_layer import checks as spec
from checker.catalogue import KATAS, SOLUTIONS

solution = engine.load_solution(catalogue.find("decoder_layer"))


def ours_for(c):
    torch.manual_seed(c.id)
    ours = solution.DecoderLayer(c.D, c.H, c.d_ff).double().eval()
    with torch.no_grad():  # move the LayerNorms away from gamma=1, beta=0
        for p in ours.parameters():
            p.add_(0.1 * torch.randn_like(p))
    return ours


def _load_mha(theirs: nn.MultiheadAttention, mha) -> None:
    theirs.in_proj_weight.copy_(torch.cat([mha.W_q.weight, mha.W_k.weight, mha.W_v.weight]))
    theirs.in_proj_bias.copy_(torch.cat([mha.W_q.bias, mha.W_k.bias, mha.W_v.bias]))
    theirs.out_proj.weight.copy_(mha.W_o.weight)
    theirs.out_proj.bias.copy_(mha.W_o.bias)


def builtin_from(ours, c):
    theirs = nn.TransformerDecoderLayer(c.D, c.H, dim_feedforward=c.d_ff, dropout=0.0, activation="relu",
                                        batch_first=True, norm_first=False, dtype=torch.float64)
    with torch.no_grad():
        _load_mha(theirs.self_attn, ours.self_attn)
        _load_mha(theirs.multihead_attn, ours.cross_attn)
        theirs.linear1.load_state_dict(ours.ffn.fc1.state_dict())
        theirs.linear2.load_state_dict(ours.ffn.fc2.state_dict())
        for i in (1, 2, 3):
            getattr(theirs, f"norm{i}").load_state_dict(getattr(ours, f"norm{i}").state_dict())
    return theirs.eval()


def translate(c, tgt_mask, memory_mask):
    """Our masks (True = may attend) -> the built-in's (True = NOT allowed)."""
    attn_mask = None if tgt_mask is None else (~tgt_mask).expand(c.B, c.H, c.T_t, c.T_t).reshape(c.B * c.H, c.T_t, c.T_t)
    key_padding = None if memory_mask is None else ~memory_mask[:, 0, 0, :]  # (B, 1, 1, T_s) -> (B, T_s)
    return attn_mask, key_padding


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_matches_nn_transformer_decoder_layer(c):
    ours = ours_for(c)
    y, memory, tgt_mask, memory_mask = spec.inputs(c, "float64")
    attn_mask, key_padding = translate(c, tgt_mask, memory_mask)
    theirs = builtin_from(ours, c)
    with torch.no_grad():
        got, self_w, cross_w = ours(y, memory, tgt_mask, memory_mask)
        want = theirs(y, memory, tgt_mask=attn_mask, memory_key_padding_mask=key_padding)
        # the weights, from the built-in's own attention modules on the same intermediate values
        sa, want_self_w = theirs.self_attn(y, y, y, attn_mask=attn_mask, average_attn_weights=False)
        y1 = theirs.norm1(y + sa)
        _, want_cross_w = theirs.multihead_attn(y1, memory, memory, key_padding_mask=key_padding,
                                                average_attn_weights=False)
    torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(self_w, want_self_w, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(cross_w, want_cross_w, rtol=1e-12, atol=1e-12)


def test_builtin_bool_masks_mean_not_allowed():
    """The translation above, checked by running: True in memory_key_padding_mask hides a source key."""
    torch.manual_seed(0)
    layer = nn.TransformerDecoderLayer(4, 2, dim_feedforward=8, dropout=0.0, batch_first=True,
                                       dtype=torch.float64).eval()
    y, memory = torch.randn(1, 2, 4, dtype=torch.float64), torch.randn(1, 3, 4, dtype=torch.float64)
    hide_last = torch.tensor([[False, False, True]])
    changed = memory.clone()
    changed[0, 2] += 5.0
    with torch.no_grad():
        a = layer(y, memory, memory_key_padding_mask=hide_last)
        b = layer(y, changed, memory_key_padding_mask=hide_last)
    torch.testing.assert_close(a, b)


def _class_sources(path) -> dict:
    """{class name: its exact source text} for the top-level classes of a file."""
    text = path.read_text(encoding="utf-8")
    return {n.name: ast.get_source_segment(text, n) for n in ast.parse(text).body if isinstance(n, ast.ClassDef)}


def test_given_classes_are_the_references_of_their_katas():
    """The stub's MultiHeadAttention and FeedForward are exact copies of their katas' references."""
    given = {**_class_sources(SOLUTIONS / "torch/multi_head_attention.py"),
             **_class_sources(SOLUTIONS / "torch/feed_forward.py")}
    for path in (KATAS / "torch/decoder_layer.py", SOLUTIONS / "torch/decoder_layer.py"):
        classes = _class_sources(path)
        for name in ("MultiHeadAttention", "FeedForward"):
            assert classes[name] == given[name], f"{path}: {name} differs from its kata's reference"
