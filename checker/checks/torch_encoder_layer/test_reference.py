"""The reference EncoderLayer equals torch.nn.TransformerEncoderLayer (post-LN, ReLU, batch_first=True,
dropout 0) with the weights mapped and the padding mask translated, in float64; its attention
weights equal the built-in self-attention's."""

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_encoder_layer import checks as spec

solution = engine.load_solution(catalogue.find("encoder_layer"))


def builtin_from(ours, c):
    """nn.TransformerEncoderLayer holding our weights."""
    theirs = nn.TransformerEncoderLayer(c.D, c.H, c.d_ff, dropout=0.0, activation="relu", batch_first=True,
                                        norm_first=False, dtype=torch.float64)
    a = ours.self_attn
    with torch.no_grad():
        theirs.self_attn.in_proj_weight.copy_(torch.cat([a.W_q.weight, a.W_k.weight, a.W_v.weight]))
        theirs.self_attn.in_proj_bias.copy_(torch.cat([a.W_q.bias, a.W_k.bias, a.W_v.bias]))
        theirs.self_attn.out_proj.load_state_dict(a.W_o.state_dict())
        theirs.linear1.load_state_dict(ours.ffn.fc1.state_dict())
        theirs.linear2.load_state_dict(ours.ffn.fc2.state_dict())
        theirs.norm1.load_state_dict(ours.norm1.state_dict())
        theirs.norm2.load_state_dict(ours.norm2.state_dict())
    return theirs.eval()


def ours_for(c):
    torch.manual_seed(c.id)
    ours = solution.EncoderLayer(**spec.init(c)).double().eval()
    with torch.no_grad():  # move LayerNorm off gamma=1, beta=0 so a swapped norm1/norm2 shows
        for norm in (ours.norm1, ours.norm2):
            norm.weight.normal_()
            norm.bias.normal_()
    return ours


@pytest.mark.parametrize("c", spec.CASES + [spec.TIMING], ids=lambda c: c.label)
def test_reference_matches_nn_transformer_encoder_layer(c):
    ours = ours_for(c)
    theirs = builtin_from(ours, c)
    x, mask = spec.inputs(c, "float64")
    # Their src_key_padding_mask is (B, T) with True = PAD (NOT allowed): the opposite of ours.
    key_padding = None if mask is None else ~mask[:, 0, 0, :]
    with torch.no_grad():
        out, attn = ours(x, mask)
        want = theirs(x, src_key_padding_mask=key_padding)
        _, want_attn = theirs.self_attn(x, x, x, key_padding_mask=key_padding, need_weights=True,
                                        average_attn_weights=False)
    torch.testing.assert_close(out, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(attn, want_attn, rtol=1e-12, atol=1e-12)


def test_builtin_padding_mask_means_pad():
    """The translation above, checked by running: True in src_key_padding_mask hides that key."""
    c = spec.CASES[1]
    theirs = builtin_from(ours_for(c), c)
    x, mask = spec.inputs(c, "float64")
    key_padding = ~mask[:, 0, 0, :]
    changed = x.clone()
    changed[key_padding] += 5.0
    with torch.no_grad():
        a, b = theirs(x, src_key_padding_mask=key_padding), theirs(changed, src_key_padding_mask=key_padding)
    real = ~key_padding
    torch.testing.assert_close(a[real], b[real], rtol=1e-12, atol=1e-12)
    assert not torch.allclose(a[key_padding], b[key_padding])


def test_pre_ln_mistake_is_nn_transformer_encoder_layer_norm_first():
    """The checks' "pre-LN" mistake is the built-in's norm_first=True layer, and differs from ours."""
    c = spec.CASES[0]
    ours = ours_for(c)
    pre = builtin_from(ours, c)
    pre.norm_first = True
    wrong = spec._variant(order="pre")(**spec.init(c)).double().eval()
    wrong.load_state_dict(ours.state_dict())
    x, _ = spec.inputs(c, "float64")
    with torch.no_grad():
        torch.testing.assert_close(wrong(x)[0], pre(x), rtol=1e-12, atol=1e-12)
        assert not torch.allclose(ours(x)[0], pre(x))
