"""The NumPy positional-encoding reference against independent formulas (PyTorch has no built-in)."""

import importlib.util
import math

import numpy as np
import pytest
import torch

from checker.catalogue import SOLUTIONS


def _reference():
    spec = importlib.util.spec_from_file_location("ref_numpy_pe", SOLUTIONS / "numpy" / "positional_encoding.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.positional_encoding


positional_encoding = _reference()


@pytest.mark.parametrize("position, d_model", [(7, 12), (10, 7), (1, 5), (64, 1), (300, 33)])
def test_matches_the_paper_formula_written_with_loops(position, d_model):
    pe = positional_encoding(position, d_model)
    expected = np.empty((1, position, d_model))
    for pos in range(position):
        for i in range((d_model + 1) // 2):
            angle = pos / 10000 ** (2 * i / d_model)
            expected[0, pos, 2 * i] = math.sin(angle)
            if 2 * i + 1 < d_model:
                expected[0, pos, 2 * i + 1] = math.cos(angle)
    assert pe.shape == (1, position, d_model) and pe.dtype == np.float64
    np.testing.assert_allclose(pe, expected, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("d_model", [16, 9])
def test_matches_the_torch_div_term_version_of_seeds_003_and_004(d_model):
    max_len = 2048
    pe = torch.zeros(max_len, d_model, dtype=torch.float64)
    position = torch.arange(0, max_len, dtype=torch.float64).unsqueeze(1)
    div_term = torch.exp(torch.arange(0, d_model, 2, dtype=torch.float64) * (-math.log(10000.0) / d_model))
    pe[:, 0::2] = torch.sin(position * div_term)
    pe[:, 1::2] = torch.cos(position * div_term[: d_model // 2])  # seed 004's odd-d_model fix
    np.testing.assert_allclose(positional_encoding(max_len, d_model), pe.unsqueeze(0).numpy(), rtol=0, atol=1e-11)


def test_a_shift_by_k_positions_is_a_rotation_of_each_sin_cos_pair():
    # The paper's motivation: PE[pos + k] is a linear function (a rotation per pair) of PE[pos].
    d_model, k = 10, 3
    pe = positional_encoding(40, d_model)[0]
    for i in range(d_model // 2):
        w = 1 / 10000 ** (2 * i / d_model)
        rotation = np.array([[math.cos(k * w), -math.sin(k * w)], [math.sin(k * w), math.cos(k * w)]])
        np.testing.assert_allclose(pe[:-k, 2 * i: 2 * i + 2] @ rotation, pe[k:, 2 * i: 2 * i + 2], atol=1e-12)
