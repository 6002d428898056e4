"""The Noam schedule reference against the paper's formula written here, and its scheduler on a real optimizer.

There is no PyTorch built-in for this schedule: noam_lr is compared with lrate of "Attention Is
All You Need" §5.3 written out below, and noam_scheduler is run on a real torch.optim.SGD
(verifying on the way what the statement says about LambdaLR and the Annotated Transformer).
"""

import math
import types

import pytest
import torch
from torch.optim.lr_scheduler import LambdaLR

from checker import catalogue, engine
from checker.checks.torch_noam_schedule.driver import RecordingOptimizer, noam_schedule_run

REFERENCE = engine.load_solution(catalogue.find("noam_schedule"))


def lrate(step_num, d_model, warmup_steps):
    """§5.3: lrate = d_model^-0.5 · min(step_num^-0.5, step_num · warmup_steps^-1.5)."""
    return d_model ** -0.5 * min(step_num ** -0.5, step_num * warmup_steps ** -1.5)


@pytest.mark.parametrize("d_model, warmup, factor", [(512, 4000, 1.0), (64, 40, 2.0), (96, 7, 0.5)])
def test_noam_lr_is_the_paper_formula(d_model, warmup, factor):
    for step in [1, 2, 3, warmup - 1, warmup, warmup + 1, 2 * warmup, 10 * warmup + 3]:
        got = REFERENCE.noam_lr(step, d_model, warmup, factor)
        assert isinstance(got, float)
        assert math.isclose(got, factor * lrate(step, d_model, warmup), rel_tol=1e-14)
    # the two branches meet at the peak: step · w^-1.5 = step^-0.5 at step = w
    assert math.isclose(REFERENCE.noam_lr(warmup, d_model, warmup, factor), factor * (d_model * warmup) ** -0.5)


def test_paper_numbers():
    # base model: d_model 512, 4000 warm-up steps: the peak rate is (512 · 4000)^-0.5 ≈ 6.99e-4
    assert math.isclose(REFERENCE.noam_lr(4000, 512, 4000), 6.987712429686844e-4, rel_tol=1e-12)


def test_noam_lr_refuses_step_zero():
    with pytest.raises(ValueError):
        REFERENCE.noam_lr(0, 512, 4000)


def _lrs_during_steps(scheduler_factory, steps, optimizer):
    scheduler = scheduler_factory(optimizer)
    lrs = []
    for _ in range(steps):
        lrs.append(optimizer.param_groups[0]["lr"])
        optimizer.step()
        scheduler.step()
    return lrs


def test_scheduler_on_a_real_optimizer():
    param = torch.nn.Parameter(torch.zeros(3))
    optimizer = torch.optim.SGD([param], lr=1.0)
    lrs = _lrs_during_steps(lambda o: REFERENCE.noam_scheduler(o, 64, 40, 2.0), 125, optimizer)
    for k, lr in enumerate(lrs, start=1):
        assert math.isclose(lr, 2.0 * lrate(k, 64, 40), rel_tol=1e-14)
    assert max(range(125), key=lambda i: lrs[i]) + 1 == 40


def test_lambda_lr_calls_the_lambda_with_zero_first_and_the_annotated_transformer_repeats_step_one():
    calls = []
    param = torch.nn.Parameter(torch.zeros(1))
    optimizer = torch.optim.SGD([param], lr=1.0)
    LambdaLR(optimizer, lambda s: calls.append(s) or 1.0)
    assert calls == [0]

    def rate(step, model_size, factor, warmup):  # the Annotated Transformer's
        if step == 0:
            step = 1
        return factor * (model_size ** (-0.5) * min(step ** (-0.5), step * warmup ** (-1.5)))

    optimizer = torch.optim.SGD([param], lr=1.0)
    lrs = _lrs_during_steps(lambda o: LambdaLR(o, lambda s: rate(s, 64, 1.0, 40)), 4, optimizer)
    assert lrs[0] == lrs[1] == lrate(1, 64, 40) and lrs[2] == lrate(2, 64, 40)


def test_recording_optimizer_behaves_like_sgd_under_a_scheduler():
    """The driver's optimizer (built without Optimizer.__init__) sees the same lrs as torch.optim.SGD."""
    user = types.SimpleNamespace(noam_scheduler=REFERENCE.noam_scheduler)
    run = noam_schedule_run(user, 96, 7, 0.5, 30)
    param = torch.nn.Parameter(torch.zeros(1))
    real = _lrs_during_steps(lambda o: REFERENCE.noam_scheduler(o, 96, 7, 0.5), 30, torch.optim.SGD([param], lr=1.0))
    assert run["is_scheduler"] and run["lrs"] == real
    assert isinstance(RecordingOptimizer(1.0), torch.optim.Optimizer)
