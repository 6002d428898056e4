"""The reference BatchNorm against torch.nn.BatchNorm1d with the same weights and running statistics:
the same training outputs, gradients and running statistics over the checks' three steps, and the
same evaluation output, for (B, C) and (B, C, L) inputs."""

from types import SimpleNamespace

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_batch_norm import checks as spec
from checker.checks.torch_batch_norm.driver import batch_norm_run
from checker.kit import Kit, matches

solution = engine.load_solution(catalogue.find("batch_norm"))
kit = Kit(spec, None, solution)


class TorchBatchNorm(nn.BatchNorm1d):
    """nn.BatchNorm1d under the kata's constructor and state_dict (no num_batches_tracked)."""

    def __init__(self, num_features, eps=1e-5, momentum=0.1):
        super().__init__(num_features, eps=eps, momentum=momentum)

    def load_state_dict(self, state, strict=True):
        return super().load_state_dict({**state, "num_batches_tracked": torch.tensor(0)}, strict=strict)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_equals_nn_batch_norm_1d_over_the_checks_sequence(c):
    args = spec._sequence_args(kit, c)
    ours = batch_norm_run(solution, *args)
    theirs = batch_norm_run(SimpleNamespace(BatchNorm=TorchBatchNorm), *args)
    assert set(ours) == set(theirs)
    for key, value in theirs.items():
        if isinstance(value, torch.Tensor):
            torch.testing.assert_close(ours[key], value, rtol=1e-9, atol=1e-10, msg=key)
        else:
            assert ours[key] == value, key


def test_defaults_are_nn_batch_norm_1d_defaults():
    ours, theirs = solution.BatchNorm(4), nn.BatchNorm1d(4)
    assert (ours.eps, ours.momentum) == (theirs.eps, theirs.momentum) == (1e-5, 0.1)
    assert [n for n, _ in ours.named_buffers()] == ["running_mean", "running_var"]


def test_running_variance_is_unbiased_and_normalisation_biased():
    x = torch.randn(6, 3, dtype=torch.float64)
    layer = solution.BatchNorm(3, momentum=1.0).double()
    y = layer(x)
    torch.testing.assert_close(layer.running_var, x.var(0, unbiased=True))
    torch.testing.assert_close(y, (x - x.mean(0)) / torch.sqrt(x.var(0, unbiased=False) + 1e-5))


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_differs_from_the_reference_somewhere_in_the_sequence(mistake):
    def differs(c):
        args = spec._sequence_args(kit, c)
        want = batch_norm_run(solution, *args)
        got = batch_norm_run(spec._namespace(mistake.impl), *args)
        return any(isinstance(v, torch.Tensor) and not matches(got[k], v) for k, v in want.items())

    assert any(differs(c) for c in spec.CASES)
