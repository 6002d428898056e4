"""The reference clip_loss equals the public code it follows, re-typed offline: open_clip's ClipLoss on one process
(mlfoundations/open_clip, src/open_clip/loss.py: get_logits, labels = arange, the mean of the two cross-entropies) after
open_clip's F.normalize and logit_scale.exp(), with open_clip's clamp of the parameter at log(100); and the CLIP paper's
Figure 3 written out pair by pair (Radford et al. 2021)."""

import math

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_clip_loss import checks as spec

solution = engine.load_solution(catalogue.find("clip_loss"))
ALL = [*spec.CASES, spec.TIMING]


def _open_clip(image_features, text_features, logit_scale):
    """ClipLoss.get_logits (world_size 1) and forward, unchanged but for self."""
    logits_per_image = logit_scale * image_features @ text_features.T
    logits_per_text = logit_scale * text_features @ image_features.T
    labels = torch.arange(logits_per_image.shape[0], device=image_features.device, dtype=torch.long)
    total_loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
    return total_loss, logits_per_image


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
def test_reference_equals_open_clip(c):
    image, text, t, max_scale = spec.inputs(c, "float64")
    param = t.clone()
    if max_scale is not None:
        param.clamp_(0, math.log(max_scale))  # open_clip, after each step: logit_scale.clamp_(0, math.log(100))
    want_loss, want_logits = _open_clip(F.normalize(image, dim=-1), F.normalize(text, dim=-1), param.exp())
    loss, logits = solution.clip_loss(image, text, t, max_scale)
    torch.testing.assert_close(loss, want_loss, rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(logits, want_logits, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_reference_is_the_paper_pair_by_pair(c):
    image, text, t, max_scale = spec.inputs(c, "float64")
    scale = math.exp(t.item()) if max_scale is None else min(math.exp(t.item()), max_scale)
    n = c.N
    cos = [[sum(a * b for a, b in zip(image[i].tolist(), text[j].tolist()))
            / (image[i].norm().item() * text[j].norm().item()) for j in range(n)] for i in range(n)]
    logits = [[scale * cos[i][j] for j in range(n)] for i in range(n)]
    loss_i = sum(math.log(sum(math.exp(logits[i][j]) for j in range(n))) - logits[i][i] for i in range(n)) / n
    loss_t = sum(math.log(sum(math.exp(logits[i][j]) for i in range(n))) - logits[j][j] for j in range(n)) / n
    assert abs(solution.clip_loss(image, text, t, max_scale)[0].item() - (loss_i + loss_t) / 2) < 1e-10


def test_a_capped_scale_passes_no_gradient_to_t_and_an_uncapped_one_does():
    for c, capped in ((spec.CASES[1], True), (spec.CASES[2], False), (spec.CASES[0], False)):
        image, text, t, max_scale = spec.inputs(c, "float64")
        t = t.clone().requires_grad_()
        solution.clip_loss(image, text, t, max_scale)[0].backward()
        assert (t.grad == 0).item() == capped


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_named_mistake_changes_the_outputs_on_some_case(mistake):
    differs = False
    for c in spec.CASES:
        args = spec.inputs(c, "float64")
        differs |= not torch.allclose(mistake.impl(*args)[0], solution.clip_loss(*args)[0])
    assert differs
