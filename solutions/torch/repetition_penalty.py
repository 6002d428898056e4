"""Repetition, frequency and presence penalties on the next token's logits (reference answer).

Shape legend:
    B  batch: sequences decoded side by side
    V  vocabulary size
    T  tokens generated so far in each sequence

As Hugging Face's RepetitionPenaltyLogitsProcessor (CTRL, Keskar et al. 2019: gather the logits of the tokens already
generated, divide the positive ones by the penalty, multiply the negative ones, scatter them back) followed by
OpenAI's frequency and presence penalties (logits - count · frequency_penalty - [count > 0] · presence_penalty), in
vLLM's order: the repetition penalty first.
"""

import torch
from torch import Tensor

VOCAB = 1  # the axis of the vocabulary in logits (B, V), and of the tokens in generated (B, T)


def _rescaled(score: Tensor, penalty: float) -> Tensor:
    """CTRL's rescaling: a negative logit times the penalty, a positive one divided by it (both less likely)."""
    return torch.where(score < 0, score * penalty, score / penalty)


def apply_penalties(logits: Tensor, generated: Tensor, penalty: float = 1.0, frequency_penalty: float = 0.0,
                    presence_penalty: float = 0.0) -> Tensor:
    """The penalised logits, (B, V) in logits' dtype; the caller's logits are left as they were."""
    # 1) how often each token of the vocabulary was generated in each row
    counts = torch.zeros_like(logits).scatter_add(VOCAB, generated, torch.ones_like(generated, dtype=logits.dtype))  # (B, V)
    present = (counts > 0).to(logits.dtype)  # (B, V) 1.0 where generated at least once
    # 2) CTRL's penalty on the generated tokens' logits: gathered, rescaled, scattered back (a repeat counts once)
    logits = logits.scatter(VOCAB, generated, _rescaled(torch.gather(logits, VOCAB, generated), penalty))  # (B, V)
    # 3) OpenAI's penalties: the frequency penalty per occurrence, the presence penalty once
    logits = logits - counts * frequency_penalty - present * presence_penalty  # (B, V)
    return logits
