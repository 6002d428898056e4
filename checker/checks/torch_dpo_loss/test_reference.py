"""The reference dpo_loss equals the DPO authors' code (eric-mitchell/direct-preference-optimization:
_get_batch_logps on logits and labels with -100 at the prompt and padding, then preference_loss), and
PyTorch's own log-sigmoid on huge margins."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_dpo_loss import checks as spec

solution = engine.load_solution(catalogue.find("dpo_loss"))


def _get_batch_logps(logits, labels):
    """The authors' function, unchanged but for the names: shift, mask -100, sum per sequence."""
    labels = labels[:, 1:].clone()
    logits = logits[:, :-1, :]
    loss_mask = labels != -100
    labels[labels == -100] = 0
    per_token_logps = torch.gather(logits.log_softmax(-1), dim=2, index=labels.unsqueeze(2)).squeeze(2)
    return (per_token_logps * loss_mask).sum(-1), per_token_logps, loss_mask


def _preference_loss(policy_chosen, policy_rejected, reference_chosen, reference_rejected, beta):
    pi_logratios = policy_chosen - policy_rejected
    ref_logratios = reference_chosen - reference_rejected
    losses = -F.logsigmoid(beta * (pi_logratios - ref_logratios))
    chosen_rewards = beta * (policy_chosen - reference_chosen).detach()
    rejected_rewards = beta * (policy_rejected - reference_rejected).detach()
    return losses, chosen_rewards, rejected_rewards


@pytest.mark.parametrize("beta", [0.1, 0.5, 3.0])
def test_reference_matches_the_authors_code_on_logits_and_labels(beta):
    g = torch.Generator().manual_seed(5)
    B, T_c, T_r, V = 3, 8, 6, 11
    batch = {}
    for side, T in (("chosen", T_c), ("rejected", T_r)):
        labels = torch.randint(0, V, (B, T), generator=g)
        labels[:, :2] = -100  # the prompt
        labels[1, T - 2:] = -100  # padding
        batch[side] = labels
    outs = {}
    for model in ("policy", "reference"):
        for side, T in (("chosen", T_c), ("rejected", T_r)):
            logits = torch.randn(B, T, V, generator=g, dtype=torch.float64)
            outs[model, side] = _get_batch_logps(logits, batch[side])
    want = _preference_loss(outs["policy", "chosen"][0], outs["policy", "rejected"][0],
                            outs["reference", "chosen"][0], outs["reference", "rejected"][0], beta)
    got = solution.dpo_loss(outs["policy", "chosen"][1], outs["policy", "rejected"][1],
                            outs["reference", "chosen"][1], outs["reference", "rejected"][1],
                            outs["policy", "chosen"][2], outs["policy", "rejected"][2], beta)
    torch.testing.assert_close(got[0], want[0].mean(), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got[1], want[1], rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(got[2], want[2], rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_reference_is_the_formula_written_out(c):
    pc, pr, rc, rr, mc, mr, beta = spec.inputs(c, "float64")
    z = ((pc - rc) * mc).sum(1) - ((pr - rr) * mr).sum(1)
    want = torch.log1p(torch.exp(-beta * z)).mean()  # fine on these margins
    loss, chosen, rejected = solution.dpo_loss(pc, pr, rc, rr, mc, mr, beta)
    torch.testing.assert_close(loss, want, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(chosen - rejected, beta * z, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_huge_margins_stay_finite_and_equal_softplus(dtype):
    c = spec.CASES[1]
    args = spec.inputs(c, dtype, beta=spec._LARGE_BETA)
    pc, pr, rc, rr, mc, mr, beta = args
    z = beta * (((pc - rc) * mc).sum(1) - ((pr - rr) * mr).sum(1))
    assert z.min() < -745 and z.max() > 745  # the premise: log(sigmoid) would be -inf somewhere
    loss = solution.dpo_loss(*args)[0]
    assert torch.isfinite(loss)
    torch.testing.assert_close(loss, F.softplus(-z).mean(), rtol=1e-6, atol=1e-6)


def test_policy_equal_to_reference_gives_log_2_and_gradients_only_in_the_response():
    pc, pr, _, _, mc, mr, beta = spec.inputs(spec.CASES[0], "float64")
    pc, pr = pc.clone().requires_grad_(), pr.clone().requires_grad_()
    loss, chosen, rejected = solution.dpo_loss(pc, pr, pc.detach(), pr.detach(), mc, mr, beta)
    assert math.isclose(loss.item(), math.log(2), rel_tol=1e-12)
    loss.backward()
    assert (pc.grad[~mc] == 0).all() and (pr.grad[~mr] == 0).all()
    assert (pc.grad[mc] < 0).all() and (pr.grad[mr] > 0).all()  # raise the chosen, lower the rejected
    assert not chosen.requires_grad and not rejected.requires_grad


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_changes_the_loss_on_some_case(mistake):
    differs = False
    for c in spec.CASES:
        args = spec.inputs(c, "float64", beta=spec._LARGE_BETA if "sigmoid" in mistake.name or "exp" in mistake.name
                           else None)
        with torch.no_grad():
            got = mistake.impl(*args)[0]
        differs |= not torch.isclose(got, solution.dpo_loss(*args)[0], rtol=1e-6).item()
    assert differs
