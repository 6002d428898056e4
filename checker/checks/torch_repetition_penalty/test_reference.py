"""The reference equals Hugging Face's RepetitionPenaltyLogitsProcessor (transformers/generation/logits_process.py,
gather / where / scatter) followed by vLLM's apply_penalties (vllm/model_executor/layers/utils.py, bin counts and the
subtractions), both re-typed here, and CTRL's rule with OpenAI's formula evaluated token by token in plain Python."""

import math
from collections import Counter

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_repetition_penalty import checks as spec

solution = engine.load_solution(catalogue.find("repetition_penalty"))


def hf_repetition(input_ids, scores, penalty):
    score = torch.gather(scores, 1, input_ids)
    score = torch.where(score < 0, score * penalty, score / penalty)
    return scores.scatter(1, input_ids, score)


def vllm_frequency_presence(logits, tokens, frequency_penalty, presence_penalty):
    num_seqs, vocab_size = logits.shape
    bin_counts = torch.zeros((num_seqs, vocab_size + 1), dtype=torch.long)
    bin_counts.scatter_add_(1, tokens, torch.ones_like(tokens))
    bin_counts = bin_counts[:, :vocab_size]
    mask = bin_counts > 0
    logits = logits.clone()
    logits -= torch.full((num_seqs, 1), frequency_penalty, dtype=logits.dtype) * bin_counts
    logits -= torch.full((num_seqs, 1), presence_penalty, dtype=logits.dtype) * mask
    return logits


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_equals_hugging_face_then_vllm(c, dtype):
    logits, generated, penalty, fp, pp = spec.inputs(c, dtype)
    want = vllm_frequency_presence(hf_repetition(generated, logits, penalty), generated, fp, pp)
    torch.testing.assert_close(solution.apply_penalties(logits, generated, penalty, fp, pp), want)


def test_token_by_token_in_plain_python():
    logits, generated, penalty, fp, pp = spec.inputs(spec.CASES[0], "float64")
    got = solution.apply_penalties(logits, generated, penalty, fp, pp)
    for b in range(logits.shape[0]):
        counts = Counter(generated[b].tolist())
        for v in range(logits.shape[1]):
            x = logits[b, v].item()
            if counts[v]:
                x = x * penalty if x < 0 else x / penalty  # CTRL, once
            x = x - counts[v] * fp - float(counts[v] > 0) * pp  # OpenAI's API reference
            assert math.isclose(got[b, v].item(), x, rel_tol=1e-12, abs_tol=1e-12)


def test_inputs_untouched_and_defaults_identity():
    logits, generated, *_ = spec.inputs(spec.CASES[1], "float64")
    before = logits.clone()
    assert torch.equal(solution.apply_penalties(logits, generated), logits)
    solution.apply_penalties(logits, generated, 1.3, 0.5, 0.5)
    assert torch.equal(logits, before)
