"""The reference ppo_loss equals the public code it follows, re-typed offline: TRL's PPOTrainer minibatch loss
(huggingface/trl, trainer/ppo_trainer.py, with trainer/utils.py's masked_mean; TRL's entropy from the logits) for
reduction="token", OpenRLHF's PolicyLoss and ValueLoss (OpenRLHF/OpenRLHF, models/loss.py, masked_mean over dim=-1
then the mean) for reduction="sequence", and torch.distributions.Categorical's entropy; and PPO's formula written
out token by token (Schulman et al. 2017, eq. 7 and 9)."""

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_ppo_loss import checks as spec

solution = engine.load_solution(catalogue.find("ppo_loss"))
ALL = [*spec.CASES, spec.TIMING]


def _trl_masked_mean(values, mask, axis=None):
    if axis is not None:
        return (values * mask).sum(axis=axis) / mask.sum(axis=axis)
    return (values * mask).sum() / mask.sum()


def _trl(new_logprobs, mb_logprobs, mb_advantage, vpred, mb_values, mb_return, logits, mask, cliprange,
         cliprange_value):
    """TRL's lines, unchanged but for the names of the config's fields; mask = ~padding_mask."""
    vpredclipped = torch.clamp(vpred, mb_values - cliprange_value, mb_values + cliprange_value)
    vf_losses1 = torch.square(vpred - mb_return)
    vf_losses2 = torch.square(vpredclipped - mb_return)
    vf_loss_max = torch.max(vf_losses1, vf_losses2)
    vf_loss = 0.5 * _trl_masked_mean(vf_loss_max, mask)
    logprobs_diff = new_logprobs - mb_logprobs
    ratio = torch.exp(logprobs_diff)
    pg_losses = -mb_advantage * ratio
    pg_losses2 = -mb_advantage * torch.clamp(ratio, 1.0 - cliprange, 1.0 + cliprange)
    pg_loss_max = torch.max(pg_losses, pg_losses2)
    pg_loss = _trl_masked_mean(pg_loss_max, mask)
    prob_dist = F.softmax(logits, dim=-1)
    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(prob_dist * logits, dim=-1)
    return pg_loss, vf_loss, _trl_masked_mean(entropy, mask)


def _openrlhf_masked_mean(tensor, mask, dim=None):
    return (tensor * mask).sum(axis=dim) / mask.sum(axis=dim)


def _openrlhf(log_probs, old_log_probs, advantages, values, old_values, returns, action_mask, clip_eps, value_clip):
    """PolicyLoss.forward and ValueLoss.forward, unchanged but for self.clip_eps."""
    ratio = (log_probs - old_log_probs).exp()
    surr1 = ratio * advantages
    surr2 = ratio.clamp(1 - clip_eps, 1 + clip_eps) * advantages
    loss = -torch.min(surr1, surr2)
    pg_loss = _openrlhf_masked_mean(loss, action_mask, dim=-1).mean()
    values_clipped = old_values + (values - old_values).clamp(-value_clip, value_clip)
    surr1 = (values_clipped - returns) ** 2
    surr2 = (values - returns) ** 2
    loss = torch.max(surr1, surr2)
    vf_loss = 0.5 * _openrlhf_masked_mean(loss, action_mask, dim=-1).mean()
    return pg_loss, vf_loss


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
def test_reference_equals_trl_per_token_and_openrlhf_per_sequence(c):
    *tensors, clip_eps, clip_value, vf_coef, ent_coef, _ = spec.inputs(c, "float64")
    logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask = tensors
    m = mask.to(torch.float64)
    loss, pg, vf, ent = solution.ppo_loss(*tensors, clip_eps, clip_value, vf_coef, ent_coef, "token")
    want_pg, want_vf, want_ent = _trl(logprobs, old_logprobs, advantages, values, old_values, returns, logits, m,
                                      clip_eps, clip_value)
    for got, want in ((pg, want_pg), (vf, want_vf), (ent, want_ent),
                      (loss, want_pg + vf_coef * want_vf - ent_coef * want_ent)):
        torch.testing.assert_close(got, want, rtol=1e-12, atol=1e-12)
    _, pg, vf, _ = solution.ppo_loss(*tensors, clip_eps, clip_value, vf_coef, ent_coef, "sequence")
    want_pg, want_vf = _openrlhf(logprobs, old_logprobs, advantages, values, old_values, returns, m, clip_eps,
                                 clip_value)
    torch.testing.assert_close(pg, want_pg, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(vf, want_vf, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_is_the_formula_token_by_token(c):
    *tensors, clip_eps, clip_value, vf_coef, ent_coef, reduction = spec.inputs(c, "float64")
    logprobs, old_logprobs, advantages, values, old_values, returns, logits, mask = tensors
    per_row = []
    for b in range(c.B):
        pg, vf, ent = [], [], []
        for t in range(c.T):
            if not mask[b, t]:
                continue
            r = torch.exp(logprobs[b, t] - old_logprobs[b, t]).item()
            A = advantages[b, t].item()
            pg.append(-min(r * A, min(max(r, 1 - clip_eps), 1 + clip_eps) * A))  # -L^CLIP, eq. 7
            v, v_old, R = values[b, t].item(), old_values[b, t].item(), returns[b, t].item()
            v_clip = min(max(v, v_old - clip_value), v_old + clip_value)
            vf.append(max((v - R) ** 2, (v_clip - R) ** 2))
            p = torch.softmax(logits[b, t], dim=0)
            ent.append(-(p * p.log()).sum().item())
        per_row.append((pg, vf, ent))
    if reduction == "token":
        def mean(i):
            flat = [x for row in per_row for x in row[i]]
            return sum(flat) / len(flat)
    else:
        def mean(i):
            return sum(sum(row[i]) / len(row[i]) for row in per_row) / len(per_row)
    want = (mean(0) + vf_coef * 0.5 * mean(1) - ent_coef * mean(2), mean(0), 0.5 * mean(1), mean(2))
    got = solution.ppo_loss(*tensors, clip_eps, clip_value, vf_coef, ent_coef, reduction)
    for g, w in zip(got, want):
        assert abs(g.item() - w) < 1e-10


def test_entropy_equals_torch_categorical():
    logits = 3 * torch.randn(4, 6, 9, generator=torch.Generator().manual_seed(3), dtype=torch.float64)
    torch.testing.assert_close(solution.entropy_per_token(logits),
                               torch.distributions.Categorical(logits=logits).entropy(), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_changes_the_outputs_on_some_case(mistake):
    differs = False
    for c in spec.CASES:
        args = spec.inputs(c, "float64")
        differs |= not all(torch.allclose(a, b, rtol=1e-6) for a, b in zip(mistake.impl(*args), solution.ppo_loss(*args)))
    assert differs
