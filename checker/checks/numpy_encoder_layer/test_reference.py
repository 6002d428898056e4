"""The NumPy encoder-layer reference agrees with torch.nn.TransformerEncoderLayer (post-norm, ReLU,
batch_first=True, dropout 0, eps 1e-6) with the weights mapped, in float64.

Mapping: nn.Linear computes x @ weight.T, so weight = W.T for our x @ W; the attention has no bias
here (in_proj_bias and out_proj.bias set to zero). PyTorch's src_key_padding_mask means
True = PAD (ignored), the opposite of ours: it receives ~real.
"""

import importlib.util

import numpy as np
import pytest
import torch

from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_encoder_layer", SOLUTIONS / "numpy" / "encoder_layer.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def _params(D, F, g):
    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    return [randn(D, D, scale=D ** -0.5) for _ in range(4)] + [randn(D) * 0.5 + 1, randn(D) * 0.5] + [
        randn(D, F, scale=D ** -0.5), randn(F) * 0.5, randn(F, D, scale=F ** -0.5), randn(D) * 0.5,
        randn(D) * 0.5 + 1, randn(D) * 0.5]


def _torch_layer(D, H, F, p):
    Wq, Wk, Wv, Wo, g1, b1n, W1, b1, W2, b2, g2, b2n = p
    layer = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=F, dropout=0.0, activation="relu",
                                             layer_norm_eps=1e-6, batch_first=True, norm_first=False,
                                             dtype=torch.float64)
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([Wq.T, Wk.T, Wv.T]))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(Wo.T)
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(W1.T)
        layer.linear1.bias.copy_(b1)
        layer.linear2.weight.copy_(W2.T)
        layer.linear2.bias.copy_(b2)
        layer.norm1.weight.copy_(g1)
        layer.norm1.bias.copy_(b1n)
        layer.norm2.weight.copy_(g2)
        layer.norm2.bias.copy_(b2n)
    return layer.eval()


@pytest.mark.parametrize("B, T, D, H, F, lengths", [(2, 5, 12, 3, 20, None), (3, 6, 8, 2, 10, [4, 6, 1]),
                                                    (2, 7, 15, 5, 9, [7, 3])])
def test_matches_nn_transformer_encoder_layer(B, T, D, H, F, lengths):
    g = torch.Generator().manual_seed(B * 100 + T)
    x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    p = _params(D, F, g)
    layer = _torch_layer(D, H, F, p)
    real = None if lengths is None else torch.arange(T) < torch.tensor(lengths)[:, None]  # (B, T), True = real
    expected = layer(x, src_key_padding_mask=None if real is None else ~real)  # grads on: no fast path
    mask = None if real is None else real.numpy()[:, None, None, :]  # (B, 1, 1, T), True = real
    got = ref.encoder_layer(x.numpy(), mask, D, H, F, *(t.numpy() for t in p))
    assert got.shape == (B, T, D) and got.dtype == np.float64
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_torch_padding_mask_means_true_is_pad():
    """Verified by running: with True = PAD, changing a PAD token leaves the real positions unchanged."""
    g = torch.Generator().manual_seed(5)
    D, H, F, T = 8, 2, 10, 6
    layer = _torch_layer(D, H, F, _params(D, F, g))
    x = torch.randn(1, T, D, generator=g, dtype=torch.float64)
    pad = torch.tensor([[False] * 4 + [True] * 2])
    changed = x.clone()
    changed[0, 4:] += 3.0
    torch.testing.assert_close(layer(x, src_key_padding_mask=pad)[0, :4], layer(changed, src_key_padding_mask=pad)[0, :4])
