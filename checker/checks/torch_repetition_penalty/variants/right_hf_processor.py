"""Hugging Face's RepetitionPenaltyLogitsProcessor.__call__ (transformers/generation/logits_process.py): gather,
torch.where(score < 0, score * penalty, score / penalty), scatter; then the frequency and presence penalties as
OpenAI's API reference states them (mu[j] - c[j] * alpha_frequency - float(c[j] > 0) * alpha_presence), counted
with a one-hot sum. Re-typed, names kept."""
import torch
import torch.nn.functional as F


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    input_ids, scores = generated, logits
    score = torch.gather(scores, 1, input_ids)
    # if score < 0 then repetition penalty has to be multiplied to reduce the token probabilities
    score = torch.where(score < 0, score * penalty, score / penalty)
    scores_processed = scores.scatter(1, input_ids, score)
    c = F.one_hot(input_ids, num_classes=scores.shape[1]).sum(dim=1).to(scores.dtype)
    return scores_processed - c * frequency_penalty - (c > 0).to(scores.dtype) * presence_penalty
