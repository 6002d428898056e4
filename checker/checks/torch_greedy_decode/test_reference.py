"""The reference greedy_decode agrees with an independent, row-by-row decoder written here.

There is no PyTorch built-in for greedy decoding: the test decodes each row on its own with
the full forward pass (model(src, prefix)) and Python lists, following the stated rules.
"""

import pytest
import torch

from checker import catalogue, engine
from checker.checks.child import transformer as fixtures
from checker.checks.torch_greedy_decode import checks as spec

solution = engine.load_solution(catalogue.find("greedy_decode"))


def greedy_by_rows(model, src, bos_id, eos_id, max_new_tokens):
    """Each row alone: grow it with the argmax of the last position until EOS; PAD it to the batch's steps."""
    model.eval()
    rows, steps = [], 0
    with torch.no_grad():
        for b in range(src.size(0)):
            row = [bos_id]
            while len(row) - 1 < max_new_tokens and (len(row) == 1 or row[-1] != eos_id):
                logits = model(src[b:b + 1], torch.tensor([row]))  # (1, T, V)
                row.append(int(logits[0, -1].argmax()))
            rows.append(row)
            steps = max(steps, len(row) - 1)
    return torch.tensor([row + [model.pad_id] * (steps + 1 - len(row)) for row in rows])


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_reference_matches_row_by_row_decoding(c):
    model, src, bos_id, eos_id, max_new = spec.inputs(c, "float64")
    got = solution.greedy_decode(model, src, bos_id, eos_id, max_new)
    want = greedy_by_rows(model, src, bos_id, eos_id, max_new)
    assert got.dtype == torch.long and torch.equal(got, want)
    assert got.size(1) == c.T_out, "the case's T_out is what the decoding gives"


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_copy_machine_copies_its_source_and_stops_where_its_eos_sits(c):
    model, src, bos_id, eos_id, max_new = spec.inputs(c, "float64")
    ids = fixtures.greedy(model, src, bos_id, eos_id, max_new)
    for b, at in enumerate(c.eos_at):
        n = ids.size(1) - 1 if at is None else at + 1  # tokens produced before (and with) EOS
        assert ids[b, 1:n + 1].tolist() == src[b, :n].tolist()
        assert (at is None) == (eos_id not in ids[b].tolist())


def test_copy_machine_logit_gap_is_far_above_float32_rounding_and_small_enough_for_sampling_to_stray():
    model = fixtures.copy_machine()
    src = torch.randint(2, 9, (8, 10), generator=torch.Generator().manual_seed(0))
    with torch.no_grad():
        logits = model(src, torch.cat([torch.ones(8, 1, dtype=torch.long), src[:, :-1]], 1))
    top = logits.topk(2, dim=-1).values
    gap = top[..., 0] - top[..., 1]
    assert gap.min() > 1.0 and gap.max() < 2.0
    assert logits.softmax(-1).max(-1).values.max() < 0.7  # sampling would pick another token often
