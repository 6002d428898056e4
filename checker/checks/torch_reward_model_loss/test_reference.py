"""The reference reward_model_loss equals the public code it follows, re-typed offline: Hugging Face's
sequence-classification pooling (transformers, LlamaForSequenceClassification.forward: the rightmost non-pad token as
(token_indices * non_pad_mask).argmax(-1)) under TRL's RewardTrainer.compute_loss (-logsigmoid(r_c - r_r [- margin])
.mean()); OpenRLHF's last-token pick (eos_indices from the flipped attention mask); and the published formula, pair
by pair (Ouyang et al. 2022, eq. 1; Touvron et al. 2023, eq. 2 for the margin)."""

import math

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_reward_model_loss import checks as spec

solution = engine.load_solution(catalogue.find("reward_model_loss"))
ALL = [*spec.CASES, spec.TIMING]


def _hf_pooled(logits, input_ids, pad_token_id):
    """LlamaForSequenceClassification's pooling, unchanged but for the names."""
    batch_size = input_ids.shape[0]
    non_pad_mask = (input_ids != pad_token_id).to(logits.device, torch.int32)
    token_indices = torch.arange(input_ids.shape[-1], device=logits.device, dtype=torch.int32)
    last_non_pad_token = (token_indices * non_pad_mask).argmax(-1)
    return logits[torch.arange(batch_size, device=logits.device), last_non_pad_token]


def _trl_loss(rewards_chosen, rewards_rejected, margin=None):
    if margin is not None:
        return -nn.functional.logsigmoid(rewards_chosen - rewards_rejected - margin).mean()
    return -nn.functional.logsigmoid(rewards_chosen - rewards_rejected).mean()


def _openrlhf_reward(values, attention_mask):
    eos_indices = attention_mask.size(1) - 1 - attention_mask.long().fliplr().argmax(dim=1, keepdim=True)
    return values.gather(dim=1, index=eos_indices).squeeze(1)


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
def test_reference_equals_hugging_face_pooling_under_trl_and_openrlhf(c):
    chosen, chosen_mask, rejected, rejected_mask, margin = spec.inputs(c, "float64")
    pad = 0  # input ids drawn from 1..99, pad 0 where the mask is False
    g = torch.Generator().manual_seed(c.id)
    ids_c = torch.where(chosen_mask, torch.randint(1, 100, chosen_mask.shape, generator=g), pad)
    ids_r = torch.where(rejected_mask, torch.randint(1, 100, rejected_mask.shape, generator=g), pad)
    r_c, r_r = _hf_pooled(chosen, ids_c, pad), _hf_pooled(rejected, ids_r, pad)
    loss, got_c, got_r = solution.reward_model_loss(chosen, chosen_mask, rejected, rejected_mask, margin)
    torch.testing.assert_close(got_c, r_c, rtol=0, atol=0)
    torch.testing.assert_close(got_r, r_r, rtol=0, atol=0)
    torch.testing.assert_close(got_c, _openrlhf_reward(chosen, chosen_mask), rtol=0, atol=0)
    torch.testing.assert_close(loss, _trl_loss(r_c, r_r, margin), rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_is_the_formula_pair_by_pair(c):
    chosen, chosen_mask, rejected, rejected_mask, margin = spec.inputs(c, "float64")
    total = 0.0
    for b in range(c.B):
        last_c = max(t for t in range(c.T_c) if chosen_mask[b, t])
        last_r = max(t for t in range(c.T_r) if rejected_mask[b, t])
        z = chosen[b, last_c].item() - rejected[b, last_r].item() - (0.0 if margin is None else margin[b].item())
        total += -math.log(1.0 / (1.0 + math.exp(-z)))
    loss = solution.reward_model_loss(chosen, chosen_mask, rejected, rejected_mask, margin)[0]
    assert abs(loss.item() - total / c.B) < 1e-12


def test_the_cases_pad_as_their_comment_says():
    for c in spec.CASES:
        _, chosen_mask, _, rejected_mask, margin = spec.inputs(c, "float64")
        assert (margin is not None) == c.margin
        for mask in (chosen_mask, rejected_mask):
            assert mask[0].all() and mask.any(dim=1).all()
            left = ~mask[:, 0] & mask[:, -1]
            right = mask[:, 0] & ~mask[:, -1]
            if c.padding == "right":
                assert not left.any() and right.any()
            elif c.padding == "left":
                assert left.any() and not right.any()


def test_huge_differences_stay_finite():
    args = spec.inputs(spec.CASES[1], "float64", scale=spec._HUGE)
    loss = solution.reward_model_loss(*args)[0]
    assert torch.isfinite(loss) and loss > 100


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_changes_the_rewards_on_some_case(mistake):
    differs = False
    for c in spec.CASES:
        args = spec.inputs(c, "float64")
        differs |= not torch.allclose(mistake.impl(*args)[1], solution.reward_model_loss(*args)[1])
    assert differs
