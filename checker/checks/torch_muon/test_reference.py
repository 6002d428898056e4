"""The reference equals Keller Jordan's zeropower_via_newtonschulz5 (KellerJordan/Muon, muon.py) with its bfloat16
cast replaced by the input's dtype, and the momentum of modded-nanogpt's first Muon (buf.mul_(momentum).add_(g),
g.add(buf, alpha=momentum)), re-typed here; the original bfloat16 iteration stays within the bound the statement
gives (0.08·lr on the new parameter); Keller Jordan's current EMA momentum gives the same step up to eps."""

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_muon import checks as spec

solution = engine.load_solution(catalogue.find("muon"))


def zeropower_via_newtonschulz5(G, steps, dtype=None):
    assert G.ndim >= 2
    a, b, c = (3.4445, -4.7750, 2.0315)
    X = G.to(dtype) if dtype is not None else G.clone()
    if G.size(-2) > G.size(-1):
        X = X.mT
    X = X / (X.norm(dim=(-2, -1), keepdim=True) + 1e-7)
    for _ in range(steps):
        A = X @ X.mT
        B = b * A + c * A @ A
        X = a * X + B @ X
    if G.size(-2) > G.size(-1):
        X = X.mT
    return X


def modded_nanogpt_step(p, g, buf, lr, momentum, nesterov, steps, dtype=None):
    buf = buf.clone()
    buf.mul_(momentum).add_(g)
    g = g.add(buf, alpha=momentum) if nesterov else buf
    g = zeropower_via_newtonschulz5(g, steps, dtype)
    g = g * max(1, g.size(-2) / g.size(-1)) ** 0.5
    return p - lr * g.to(p.dtype), buf


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_step_equals_keller_jordans_code(c, dtype):
    args = spec.inputs(c, dtype)
    tol = 1e-12 if dtype == "float64" else 1e-5  # the same operations, the scale multiplied in another order
    for got, want in zip(solution.muon_step(*args), modded_nanogpt_step(*args)):
        torch.testing.assert_close(got, want, rtol=tol, atol=tol)


@pytest.mark.parametrize("c", spec._NS_CASES, ids=lambda c: c.label)
def test_newton_schulz_equals_zeropower(c):
    G, steps = spec._ns_inputs(c, "float64")
    torch.testing.assert_close(solution.newton_schulz(G, steps), zeropower_via_newtonschulz5(G, steps), rtol=0, atol=0)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_bfloat16_original_within_the_stated_bound(c):
    args = spec.inputs(c, "float64")
    mine = solution.muon_step(*args)[0]
    original = modded_nanogpt_step(*args, dtype=torch.bfloat16)[0]
    assert (mine - original).abs().max() <= 0.08 * c.lr


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_ema_momentum_gives_the_same_step(c):
    param, grad, buf, lr, momentum, nesterov, steps = spec.inputs(c, "float64")
    ema_buf = (1 - momentum) * buf  # the EMA buffer of the same history
    new_ema, new_buf_ema = spec._step(param, grad, ema_buf, lr, momentum, nesterov, steps, ema=True)
    new, new_buf = solution.muon_step(param, grad, buf, lr, momentum, nesterov, steps)
    torch.testing.assert_close(new_buf_ema, (1 - momentum) * new_buf)
    torch.testing.assert_close(new_ema, new, rtol=0, atol=1e-5)


def test_singular_values_and_shape_scale():
    G = torch.randn(24, 6, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    s = torch.linalg.svdvals(solution.newton_schulz(G))
    assert bool((s > 0.6).all()) and bool((s < 1.2).all())
    zero = torch.zeros(24, 6, dtype=torch.float64)
    new, _ = solution.muon_step(zero, G, zero, lr=1.0)
    torch.testing.assert_close(new, -2.0 * solution.newton_schulz(G + 0.95 * G))  # √(24 / 6) = 2
