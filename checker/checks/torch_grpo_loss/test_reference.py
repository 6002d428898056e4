"""The reference GRPO equals TRL's GRPOTrainer code (advantages: view/mean/std/repeat_interleave;
loss: coef_1/coef_2, -torch.min, loss_type="grpo"), written out here independently, and DeepSeekMath's
per-completion formula evaluated token by token in plain Python."""

import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_grpo_loss import checks as spec

solution = engine.load_solution(catalogue.find("grpo_loss"))


def trl_advantages(rewards, G, eps=1e-4):
    mean_grouped = rewards.view(-1, G).mean(dim=1).repeat_interleave(G, dim=0)
    std_grouped = rewards.view(-1, G).std(dim=1).repeat_interleave(G, dim=0)
    return (rewards - mean_grouped) / (std_grouped + eps)


def trl_loss(logps, old, ref, adv, mask, eps, beta):
    completion_mask = mask.to(logps.dtype)
    per_token_kl = torch.exp(ref - logps) - (ref - logps) - 1
    coef_1 = torch.exp(logps - old)
    coef_2 = torch.clamp(coef_1, 1 - eps, 1 + eps)
    per_token_loss = -torch.min(coef_1 * adv.unsqueeze(1), coef_2 * adv.unsqueeze(1)) + beta * per_token_kl
    return ((per_token_loss * completion_mask).sum(-1) / completion_mask.sum(-1).clamp(min=1.0)).mean()


@pytest.mark.parametrize("c", spec._ADV_CASES, ids=lambda c: c.label)
def test_advantages_match_trl(c):
    rewards, G, eps = spec._adv_inputs(c)
    torch.testing.assert_close(solution.group_advantages(rewards, G, eps), trl_advantages(rewards, G, eps),
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_loss_matches_trl(c):
    args = spec.inputs(c, "float64")
    torch.testing.assert_close(solution.grpo_loss(*args), trl_loss(*args), rtol=1e-12, atol=1e-12)


def test_loss_matches_deepseekmath_token_by_token():
    """1/G Σ_i 1/|o_i| Σ_t -(min(ρA, clip(ρ)A) - β(π_ref/π - log(π_ref/π) - 1)), in plain floats."""
    c = spec.CASES[2]
    logps, old, ref, adv, mask, eps, beta = spec.inputs(c, "float64")
    total = 0.0
    for i in range(c.N):
        terms = []
        for t in range(c.T):
            if not mask[i, t]:
                continue
            rho = math.exp(logps[i, t].item()) / math.exp(old[i, t].item())
            A = adv[i].item()
            surrogate = min(rho * A, min(max(rho, 1 - eps), 1 + eps) * A)
            q = math.exp(ref[i, t].item()) / math.exp(logps[i, t].item())
            terms.append(-(surrogate - beta * (q - math.log(q) - 1)))
        total += sum(terms) / len(terms)
    assert math.isclose(solution.grpo_loss(logps, old, ref, adv, mask, eps, beta).item(), total / c.N, rel_tol=1e-12)


def test_premises_clipping_is_active_on_both_sides_and_a_group_is_constant():
    for c in spec.CASES:
        logps, old, _, adv, mask, eps, _ = spec.inputs(c, "float64")
        ratio = torch.exp(logps - old)[mask]
        assert (ratio > 1 + eps).any() and (ratio < 1 - eps).any()
        assert (adv > 0).any() and (adv < 0).any()
    rewards, G, eps = spec._adv_inputs(spec._ADV_CASES[0])
    assert torch.equal(solution.group_advantages(rewards, G, eps)[G:2 * G], torch.zeros(G, dtype=torch.float64))


def test_gradient_is_zero_where_the_clip_is_active_and_at_padding():
    logps, old, ref, adv, mask, eps, _ = spec.inputs(spec.CASES[0], "float64")
    logps = logps.clone().requires_grad_()
    solution.grpo_loss(logps, old, ref, adv, mask, eps, 0.0).backward()
    ratio = torch.exp(logps.detach() - old)
    A = adv[:, None].expand_as(ratio)
    clipped = ((A > 0) & (ratio > 1 + eps)) | ((A < 0) & (ratio < 1 - eps))
    assert (logps.grad[clipped] == 0).all() and (logps.grad[~mask] == 0).all()
    assert (logps.grad[~clipped & mask] != 0).all()


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_loss_mistake_differs_on_some_case(mistake):
    assert any(not torch.isclose(mistake.impl(*spec.inputs(c, "float64")), solution.grpo_loss(*spec.inputs(c, "float64")),
                                 rtol=1e-6) for c in spec.CASES)


@pytest.mark.parametrize("mistake", spec._ADV_MISTAKES, ids=lambda m: m.name)
def test_every_advantage_mistake_differs_on_some_case(mistake):
    assert any(not torch.allclose(mistake.impl(*spec._adv_inputs(c)), solution.group_advantages(*spec._adv_inputs(c)),
                                  rtol=1e-6) for c in spec._ADV_CASES)
