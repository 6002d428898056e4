"""The reference adamw_step against torch.optim.AdamW itself: the optimizer stepped on an nn.Parameter
with the same gradients, over the checks' loop and from the checks' single-step states."""

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_adamw import checks as spec
from checker.checks.torch_adamw.driver import adamw_loop
from checker.kit import Kit, matches

solution = engine.load_solution(catalogue.find("adamw"))
kit = Kit(spec, None, solution)


def _optimizer_loop(param, target, noise, curvature, hyper):
    p = torch.nn.Parameter(param.clone())
    opt = torch.optim.AdamW([p], foreach=False, **hyper)
    out = []
    for n in noise:
        p.grad = curvature * (p.detach() - target) + n
        opt.step()
        out.append(p.detach().clone())
    state = opt.state[p]
    return {"params": out, "exp_avg": state["exp_avg"], "exp_avg_sq": state["exp_avg_sq"]}


def test_reference_loop_equals_torch_optim_adamw():
    args = spec._loop_args(spec._LOOP)
    ours, theirs = adamw_loop(solution, *args), _optimizer_loop(*args)
    for a, b in zip(ours["params"], theirs["params"]):
        torch.testing.assert_close(a, b, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ours["exp_avg"], theirs["exp_avg"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ours["exp_avg_sq"], theirs["exp_avg_sq"], rtol=1e-12, atol=1e-12)


def test_the_checks_torch_step_is_the_optimizers_update():
    args = spec._loop_args(spec._LOOP)
    ours, theirs = adamw_loop(spec.torch_step, *args), _optimizer_loop(*args)
    for a, b in zip(ours["params"], theirs["params"]):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_one_step_from_a_given_state_equals_torch_optim_adamw(c):
    param, grad, m, v, step, *rest = spec.inputs(c, "float64")
    hyper = spec._hyper(c)
    p = torch.nn.Parameter(param.clone())
    opt = torch.optim.AdamW([p], foreach=False, **hyper)
    p.grad = grad.clone()
    opt.state[p] = {"step": torch.tensor(float(step - 1)), "exp_avg": m.clone(), "exp_avg_sq": v.clone()}
    opt.step()
    ours = solution.adamw_step(param, grad, m, v, step, *rest)
    torch.testing.assert_close(ours[0], p.detach(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ours[1], opt.state[p]["exp_avg"], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(ours[2], opt.state[p]["exp_avg_sq"], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mistake", spec.MISTAKES + [spec.CONVENTIONS[0]], ids=lambda m: m.name)
def test_every_mistake_and_the_convention_differ_from_the_reference_on_some_case(mistake):
    outs = [(kit.reference(spec.inputs(c, "float64"), impl=mistake.impl), kit.reference(spec.inputs(c, "float64")))
            for c in spec.CASES]
    assert not all(all(matches(a, b) for a, b in zip(got, want)) for got, want in outs)


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_no_mistake_passes_as_the_convention(mistake):
    conv = spec.CONVENTIONS[0].impl
    outs = [(kit.reference(spec.inputs(c, "float64"), impl=mistake.impl), kit.reference(spec.inputs(c, "float64"),
                                                                                          impl=conv))
            for c in spec.CASES]
    assert not all(all(matches(a, b) for a, b in zip(got, want)) for got, want in outs)
