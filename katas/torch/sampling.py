"""Sampling the next token: temperature, top-k and top-p (nucleus) filtering.

Shape legend:
    ...  leading axes, any number: usually (B,), one next token per sequence; (B, T) works too
    V    vocabulary size (always the LAST axis)

Implement filter_logits and sample_next_token.

filter_logits(logits, temperature=1.0, top_k=None, top_p=None) -> filtered
    logits       (..., V) float: the model's scores for the next token
    temperature  float > 0 (else ValueError): the logits are divided by it (T < 1 sharpens, T > 1 flattens)
    top_k        int or None: keep the top_k largest logits. None or 0 = off; top_k >= V keeps all.
                 Ties: every token equal to the k-th largest value stays (as Hugging Face does).
    top_p        float in (0, 1] or None: keep the nucleus, the smallest set of the most probable tokens
                 whose total probability reaches top_p (>= top_p): the token that crosses top_p stays,
                 so the most probable token always stays. None or 1.0 = off (skip the step).
    filtered     (..., V), same dtype: logits / temperature where the token stays eligible, -inf elsewhere.
    Order (as Hugging Face transformers): temperature, then top-k, then top-p computed on the
    distribution top-k left (softmax over the surviving tokens only).
    A token stays in the nucleus iff the tokens before it (sorted, most probable first) sum to < top_p.
    Tied tokens at the cut: cut in sorted order (Hugging Face) or all kept (none is strictly more
    probable than another); both are accepted.

sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None) -> ids
    logits       (..., V) float (torch.multinomial takes 2-D input: reshape to (-1, V) and back)
    temperature  0 means greedy: the argmax of every row, no randomness (top_k, top_p ignored);
                 > 0: one draw per row from softmax(filter_logits(logits, temperature, top_k, top_p));
                 < 0: ValueError.
    generator    a torch.Generator: every random number comes from it (same seed -> same draws);
                 e.g. torch.multinomial(probs, 1, generator=generator).
    ids          (...) int64: the logits' shape without V, e.g. (B,).

Do not modify logits. Vectorize: no Python loop over rows (the checker draws 20000 tokens per row
in one call, on up to 80000 rows, with a 10 s limit per call).
"""

import torch
from torch import Tensor


def filter_logits(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                  top_p: float | None = None) -> Tensor:
    raise NotImplementedError("write filter_logits")


def sample_next_token(logits: Tensor, temperature: float = 1.0, top_k: int | None = None,
                      top_p: float | None = None, generator: torch.Generator | None = None) -> Tensor:
    raise NotImplementedError("write sample_next_token")
