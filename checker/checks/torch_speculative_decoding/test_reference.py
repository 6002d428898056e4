"""The reference speculative decoding equals the target's plain greedy decode, and its number of target
calls equals an independent count (Hugging Face's assisted-generation acceptance rule, n_matches by cumsum);
the premises of the checks hold: the table models are causal, a perfect draft needs ceil(N / (k + 1)) calls
and a hopeless one N."""

import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_speculative_decoding import checks as spec

solution = engine.load_solution(catalogue.find("speculative_decoding"))
ALL = [*spec.CASES, spec.TIMING]


def plain_greedy(model, prompt, n, eos):
    ids = torch.tensor([prompt])
    for _ in range(n):
        nxt = model(ids)[:, -1].argmax(-1, keepdim=True)
        ids = torch.cat([ids, nxt], dim=1)
        if int(nxt) == eos:
            break
    return ids[0, len(prompt):].tolist()


def hf_rounds(target, draft, prompt, n, k, eos):
    """Rounds of assisted generation: candidates, one target forward, n_matches = leading agreements."""
    ids, rounds = torch.tensor([prompt]), 0
    while ids.shape[1] - len(prompt) < n:
        left = n - (ids.shape[1] - len(prompt))
        cand = ids
        for _ in range(min(k, left)):
            cand = torch.cat([cand, draft(cand)[:, -1].argmax(-1, keepdim=True)], dim=1)
        selected = target(cand)[:, ids.shape[1] - 1:].argmax(-1)
        rounds += 1
        n_matches = int(((~(cand[:, ids.shape[1]:] == selected[:, :-1])).cumsum(-1) < 1).sum())
        valid = selected[:, : n_matches + 1]
        ids = torch.cat([ids, valid], dim=1)
        if eos in valid[0].tolist():
            break
    return rounds


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
@pytest.mark.parametrize("draft", ["noisy", "same", "wrong"])
def test_reference_equals_greedy_with_the_independent_count(c, draft):
    target, drafter = spec.make_models(c, draft)
    prompt = spec.make_prompt(c)
    with torch.no_grad():
        got = solution.speculative_decode(target, drafter, prompt, c.max_new, c.k, c.eos)
        calls = len(target.calls)
        want = plain_greedy(spec.make_models(c)[0], prompt, c.max_new, c.eos)
        assert got == want
        assert calls == hf_rounds(*spec.make_models(c, draft), prompt, c.max_new, c.k, c.eos)
    assert (got, calls) == spec._expected(c, draft)
    if draft == "same" and c.eos is None:
        assert calls == math.ceil(c.max_new / (c.k + 1))
    if draft == "wrong":
        assert calls == len(want)


def test_table_models_are_causal():
    """The premise of verifying g drafts in one call: appending tokens leaves earlier logits unchanged."""
    c = spec.CASES[1]
    target, _ = spec.make_models(c)
    ids = torch.tensor([spec.make_prompt(c) + [1, 4, 2, 0]])
    full = target(ids)
    for t in range(1, ids.shape[1]):
        torch.testing.assert_close(target(ids[:, :t]), full[:, :t])


def test_every_named_mistake_is_told_apart_on_some_case():
    for m in spec.MISTAKES:
        differs = False
        for c in spec.CASES:
            right = spec._expected(c)
            try:
                wrong = m.impl(*spec.make_models(c), spec.make_prompt(c), c.max_new, c.k, c.eos)
            except Exception:  # noqa: BLE001 - a mistake that cannot run is told apart too
                differs = True
                continue
            differs |= wrong != right
        assert differs, m.name
