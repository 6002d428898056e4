"""The NumPy TransformerBlock reference (seed 002's structure) agrees with torch.nn.TransformerEncoderLayer
(post-norm, ReLU, batch_first=True, dropout 0, eps 1e-6) with the weights mapped, in float64, for a
single sequence (T, D) as in seed 002 and for a batch (B, T, D); its LayerNorm is nn.LayerNorm's.

Mapping: nn.Linear computes x @ weight.T, so weight = W.T for our x @ W; the attention has no bias
(in_proj_bias and out_proj.bias zero). PyTorch's boolean masks mean True = NOT allowed: they get ~mask.
"""

import importlib.util

import numpy as np
import pytest
import torch
import torch.nn.functional as F

from checker.checks.child import numpy_classes
from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_transformer_block",
                                                  SOLUTIONS / "numpy" / "transformer_block.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


ref = _reference()


def _weights(D, H, F_, g):
    def randn(*shape, scale=1.0):
        return torch.randn(*shape, generator=g, dtype=torch.float64) * scale

    return {"attention.W_q": randn(D, D, scale=D ** -0.5), "attention.W_k": randn(D, D, scale=D ** -0.5),
            "attention.W_v": randn(D, D, scale=D ** -0.5), "attention.W_o": randn(D, D, scale=D ** -0.5),
            "norm1.gamma": randn(D) * 0.5 + 1, "norm1.beta": randn(D) * 0.5,
            "ff.W1": randn(D, F_, scale=D ** -0.5), "ff.b1": randn(F_) * 0.5,
            "ff.W2": randn(F_, D, scale=F_ ** -0.5), "ff.b2": randn(D) * 0.5,
            "norm2.gamma": randn(D) * 0.5 + 1, "norm2.beta": randn(D) * 0.5}


def _torch_layer(D, H, F_, w):
    layer = torch.nn.TransformerEncoderLayer(D, H, dim_feedforward=F_, dropout=0.0, activation="relu",
                                             layer_norm_eps=1e-6, batch_first=True, norm_first=False,
                                             dtype=torch.float64)
    with torch.no_grad():
        layer.self_attn.in_proj_weight.copy_(torch.cat([w["attention.W_q"].T, w["attention.W_k"].T,
                                                        w["attention.W_v"].T]))
        layer.self_attn.in_proj_bias.zero_()
        layer.self_attn.out_proj.weight.copy_(w["attention.W_o"].T)
        layer.self_attn.out_proj.bias.zero_()
        layer.linear1.weight.copy_(w["ff.W1"].T)
        layer.linear1.bias.copy_(w["ff.b1"])
        layer.linear2.weight.copy_(w["ff.W2"].T)
        layer.linear2.bias.copy_(w["ff.b2"])
        for norm, name in ((layer.norm1, "norm1"), (layer.norm2, "norm2")):
            norm.weight.copy_(w[f"{name}.gamma"])
            norm.bias.copy_(w[f"{name}.beta"])
    return layer.eval()


def _block(D, H, F_, w):
    block = ref.TransformerBlock(D, H, F_)
    for name, value in w.items():
        numpy_classes.set_path(block, name, value.numpy())
    return block


@pytest.mark.parametrize("D, H, F_", [(12, 3, 20), (15, 5, 9)])
def test_single_sequence_with_a_causal_mask_matches_the_encoder_layer(D, H, F_):
    T = 7
    g = torch.Generator().manual_seed(D)
    w = _weights(D, H, F_, g)
    x = torch.randn(T, D, generator=g, dtype=torch.float64)  # seed 002's (seq_len, d_model)
    causal = torch.ones(T, T, dtype=torch.bool).tril()  # ours: True = visible
    expected = _torch_layer(D, H, F_, w)(x, src_mask=~causal)  # unbatched input; True = hidden in torch
    got = _block(D, H, F_, w).forward(x.numpy(), causal.numpy())
    assert got.shape == (T, D)
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_batch_with_padding_matches_the_encoder_layer():
    B, T, D, H, F_ = 3, 6, 8, 2, 10
    g = torch.Generator().manual_seed(1)
    w = _weights(D, H, F_, g)
    x = torch.randn(B, T, D, generator=g, dtype=torch.float64)
    real = torch.arange(T) < torch.tensor([[4], [6], [2]])  # (B, T), True = real token
    expected = _torch_layer(D, H, F_, w)(x, src_key_padding_mask=~real)  # grads on: no fast path
    got = _block(D, H, F_, w).forward(x.numpy(), real.numpy()[:, None, None, :])
    np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-10, atol=1e-10)


def test_layer_norm_is_nn_layer_norms_not_seed_002s():
    g = torch.Generator().manual_seed(2)
    x = torch.randn(4, 9, generator=g, dtype=torch.float64) * 0.003  # variance ~1e-5: where eps goes matters
    norm = ref.LayerNorm(9)
    norm.gamma, norm.beta = torch.randn(9, generator=g, dtype=torch.float64).numpy(), np.zeros(9)
    got = norm.forward(x.numpy())
    expected = F.layer_norm(x, (9,), weight=torch.from_numpy(norm.gamma), eps=1e-6).numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-12, atol=1e-12)
    xn = x.numpy()
    seed_002 = norm.gamma * (xn - xn.mean(-1, keepdims=True)) / (xn.std(-1, keepdims=True) + 1e-6)
    assert not np.allclose(got, seed_002, rtol=1e-3)  # the contract differs from seed 002's std + eps
