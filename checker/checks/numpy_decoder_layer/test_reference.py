"""The NumPy decoder-layer reference agrees with torch.nn.TransformerDecoderLayer (post-norm, ReLU,
batch_first=True, dropout 0, eps 1e-6) with the weights mapped, in float64.

Mapping: nn.Linear computes x @ weight.T, so weight = W.T for our x @ W; the attentions have no bias
here (in_proj_bias and out_proj.bias set to zero). PyTorch's boolean masks mean True = NOT allowed,
the opposite of ours: tgt_mask receives ~causal, memory_key_padding_mask receives ~real.
"""

import importlib.util

import numpy as np
import pytest
import torch

from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_decoder_layer", SOLUTIONS / "numpy" / "decoder_layer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def _params(D, F, g):
    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    def attention():
        return [randn(D, D, scale=D ** -0.5) for _ in range(4)] + [randn(D) * 0.5 + 1, randn(D) * 0.5]

    ffn = [randn(D, F, scale=D ** -0.5), randn(F) * 0.5, randn(F, D, scale=F ** -0.5), randn(D) * 0.5]
    return attention() + attention() + ffn + [randn(D) * 0.5 + 1, randn(D) * 0.5]


def _torch_layer(D, H, F, p):
    (Wq1, Wk1, Wv1, Wo1, g1, n1, Wq2, Wk2, Wv2, Wo2, g2, n2, W1, b1, W2, b2, g3, n3) = p
    layer = torch.nn.TransformerDecoderLayer(D, H, dim_feedforward=F, dropout=0.0, activation="relu",
                                             layer_norm_eps=1e-6, batch_first=True, norm_first=False,
                                             dtype=torch.float64)
    with torch.no_grad():
        for attn, (Wq, Wk, Wv, Wo) in ((layer.self_attn, (Wq1, Wk1, Wv1, Wo1)),
                                       (layer.multihead_attn, (Wq2, Wk2, Wv2, Wo2))):
            attn.in_proj_weight.copy_(torch.cat([Wq.T, Wk.T, Wv.T]))
            attn.in_proj_bias.zero_()
            attn.out_proj.weight.copy_(Wo.T)
            attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(W1.T)
        layer.linear1.bias.copy_(b1)
        layer.linear2.weight.copy_(W2.T)
        layer.linear2.bias.copy_(b2)
        for norm, (g, n) in ((layer.norm1, (g1, n1)), (layer.norm2, (g2, n2)), (layer.norm3, (g3, n3))):
            norm.weight.copy_(g)
            norm.bias.copy_(n)
    return layer.eval()


@pytest.mark.parametrize("B, T_t, T_s, D, H, F, src_lengths, tgt_lengths", [
    (2, 6, 6, 12, 3, 20, [4, 6], None),
    (3, 5, 7, 8, 2, 10, [5, 7, 2], None),
    (2, 7, 4, 15, 5, 9, [4, 3], [5, 7]),
    (2, 3, 5, 8, 4, 7, None, None),
])
def test_matches_nn_transformer_decoder_layer(B, T_t, T_s, D, H, F, src_lengths, tgt_lengths):
    g = torch.Generator().manual_seed(B * 100 + T_t * 10 + T_s)
    x = torch.randn(B, T_t, D, generator=g, dtype=torch.float64)
    memory = torch.randn(B, T_s, D, generator=g, dtype=torch.float64)
    p = _params(D, F, g)
    layer = _torch_layer(D, H, F, p)
    causal = torch.ones(T_t, T_t, dtype=torch.bool).tril()  # ours: True = visible
    src_real = None if src_lengths is None else torch.arange(T_s) < torch.tensor(src_lengths)[:, None]
    tgt_real = None if tgt_lengths is None else torch.arange(T_t) < torch.tensor(tgt_lengths)[:, None]
    expected = layer(x, memory, tgt_mask=~causal,
                     tgt_key_padding_mask=None if tgt_real is None else ~tgt_real,
                     memory_key_padding_mask=None if src_real is None else ~src_real)
    lookahead = causal.numpy()[None, None]  # (1, 1, T_t, T_t)
    if tgt_real is not None:
        lookahead = lookahead & tgt_real.numpy()[:, None, None, :]  # (B, 1, T_t, T_t)
    padding = None if src_real is None else src_real.numpy()[:, None, None, :]  # (B, 1, 1, T_s)
    got = ref.decoder_layer(x.numpy(), memory.numpy(), lookahead, padding, D, H, F, *(t.numpy() for t in p))
    assert got.shape == (B, T_t, D) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_torch_tgt_mask_means_true_is_hidden():
    """Verified by running: with tgt_mask = triu(k=1) (True = hidden) the future does not leak."""
    g = torch.Generator().manual_seed(9)
    D, H, F, T = 8, 2, 10, 5
    layer = _torch_layer(D, H, F, _params(D, F, g))
    x = torch.randn(1, T, D, generator=g, dtype=torch.float64)
    memory = torch.randn(1, 4, D, generator=g, dtype=torch.float64)
    hidden = torch.ones(T, T, dtype=torch.bool).triu(1)
    changed = x.clone()
    changed[0, 3:] += 2.0
    torch.testing.assert_close(layer(x, memory, tgt_mask=hidden)[0, :3], layer(changed, memory, tgt_mask=hidden)[0, :3])
