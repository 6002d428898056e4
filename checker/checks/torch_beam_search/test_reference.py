"""The reference beam_search agrees with independent searches written without it.

PyTorch has no beam search: the test compares the reference with the check module's list-based
search (search_with), with an exhaustive search over every sequence when the beam is wide enough
never to prune, and with greedy decoding when beam_size = 1; it also checks the fixture model and
the claims the checks and the statement make.
"""

import itertools
import math

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_beam_search import checks as spec
from checker.checks.torch_beam_search.driver import TableModel
from checker.kit import case

solution = engine.load_solution(catalogue.find("beam_search"))
ALL = spec.CASES + spec._EXHAUSTIVE + [spec.TIMING]


@pytest.mark.parametrize("c", ALL, ids=lambda c: c.label)
def test_reference_matches_the_list_based_search(c):
    got = solution.beam_search(*spec.inputs(c))
    assert spec.same(got, spec.search_with(*spec.inputs(c)))
    assert all(isinstance(ids, list) and isinstance(score, float) for ids, score in got)


def all_sequences(V, eos_id, max_new):
    """Every sequence the search can return: stopped at the first EOS or at max_new tokens."""
    for n in range(1, max_new + 1):
        for seq in itertools.product(range(V), repeat=n):
            if eos_id not in seq[:-1] and (seq[-1] == eos_id or n == max_new):
                yield list(seq)


@pytest.mark.parametrize("c", spec._EXHAUSTIVE, ids=lambda c: c.label)
def test_a_beam_that_never_prunes_finds_the_best_of_every_sequence(c):
    model = spec.make_model(c)
    assert c.beam >= c.V ** c.max_new
    scored = sorted(((s, sum(model.log_prob(s)) / len(s) ** c.lp) for s in all_sequences(c.V, c.eos, c.max_new)),
                    key=lambda h: h[1], reverse=True)[:c.beam]
    assert spec.same(solution.beam_search(*spec.inputs(c)), scored)
    assert spec.same(spec.exhaustive_search(*spec.inputs(c)), scored)


@pytest.mark.parametrize("c", spec.CASES, ids=lambda c: c.label)
def test_beam_size_one_is_greedy_and_wider_beams_do_not_score_below_it(c):
    model, bos, eos, _, max_new, lp = spec.inputs(c)
    assert spec.same(solution.beam_search(model, bos, eos, 1, max_new, lp), spec.greedy_search(model, bos, eos, max_new, lp))
    best = solution.beam_search(model, bos, eos, c.beam, max_new, 0.0)[0][1]
    assert best >= spec.greedy_search(model, bos, eos, max_new)[0][1] - 1e-12


def test_the_fixture_model_reads_its_table_from_the_last_two_tokens():
    model = TableModel(5, bos_id=1, seed=3)
    first = model(torch.tensor([[1]]))
    assert first.shape == (1, 5) and first.dtype == torch.float64
    assert math.isclose(float(first.exp().sum()), 1.0, rel_tol=1e-12)
    prefixes = torch.tensor([[1, 2, 3], [1, 0, 3], [1, 2, 3]])
    out = model(prefixes)
    assert torch.equal(out[0], out[2]) and not torch.equal(out[0], out[1])
    assert model.log_prob([2, 3, 4]) == [float(model(torch.tensor([[1] + [2, 3][:i]]))[0, t]) for i, t in enumerate([2, 3, 4])]
    with pytest.raises(ValueError):
        model(torch.tensor([[0, 2]]))  # does not start with BOS
    with pytest.raises(ValueError):
        model(torch.tensor([1, 2]))  # not (N, t)


def test_every_named_mistake_changes_the_result_somewhere():
    for m in spec.MISTAKES:
        assert any(not spec.same(solution.beam_search(*spec.inputs(c)), m.impl(*spec.inputs(c)))
                   for c in spec.CASES + spec._EXHAUSTIVE), m.name


def test_case_6_stops_early_because_every_kept_extension_ends_in_eos():
    c = next(c for c in spec.CASES if c.id == 6)
    model = spec.make_model(c)
    model.watch_eos = c.eos
    solution.beam_search(*((model,) + spec.inputs(c)[1:]))
    assert len(model.calls) < c.max_new


def list_beam(model, bos, eos, beam_size, max_new, lp, *, per_parent_first=False, normalized_pruning=False):
    """A plain beam over lists, with the two rewrites the statement calls equivalent."""
    beams, done = [([bos], 0.0)], []
    for _ in range(max_new):
        rows = model(torch.tensor([ids for ids, _ in beams])).tolist()
        groups = [[(ids + [t], s + lp_t) for t, lp_t in enumerate(row)] for (ids, s), row in zip(beams, rows)]
        key = (lambda h: h[1] / (len(h[0]) - 1) ** lp) if normalized_pruning else (lambda h: h[1])
        if per_parent_first:
            groups = [sorted(g, key=key, reverse=True)[:beam_size] for g in groups]
        kept = sorted((h for g in groups for h in g), key=key, reverse=True)[:beam_size]
        done += [h for h in kept if h[0][-1] == eos]
        beams = [h for h in kept if h[0][-1] != eos]
        if not beams:
            break
    ranked = sorted(((ids[1:], s / (len(ids) - 1) ** lp) for ids, s in done + beams), key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]


@pytest.mark.parametrize("seed", range(20))
def test_per_hypothesis_top_k_then_one_global_cut_equals_the_global_cut(seed):
    # a winner of the global cut is always among its own parent's top beam_size extensions
    model = TableModel(6, bos_id=0, seed=seed, eos_id=1, eos_bias=1.0)
    for beam_size in (2, 3, 5):
        ref = solution.beam_search(model, 0, 1, beam_size, 5, 0.5)
        assert spec.same(list_beam(model, 0, 1, beam_size, 5, 0.5), ref)
        assert spec.same(list_beam(model, 0, 1, beam_size, 5, 0.5, per_parent_first=True), ref)


@pytest.mark.parametrize("seed", range(10))
def test_length_normalized_pruning_equals_summed_pruning(seed):
    # every candidate of a step has the same length, so dividing by len ** lp does not reorder them
    model = TableModel(7, bos_id=2, seed=50 + seed, eos_id=3, eos_bias=1.0)
    for lp in (0.5, 2.0):
        ref = solution.beam_search(model, 2, 3, 3, 6, lp)
        assert spec.same(list_beam(model, 2, 3, 3, 6, lp, normalized_pruning=True), ref)
