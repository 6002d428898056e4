"""Beam search over a language model that returns log-probabilities.

Shape legend:
    N    live hypotheses handed to the model at one step (1 at the first step, then at most beam_size)
    t    tokens in each prefix, BOS included (1 at the first step: BOS alone)
    V    vocabulary size

Implement beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0).

Arguments:
    model           model(prefixes) -> log_probs: prefixes (N, t) int64, every row starting with BOS, all
                    rows of one call the same length; log_probs (N, V) float64, the log-probabilities of
                    the next token after each prefix. (The checker's model is a fixed table: no dropout,
                    no weights to train; run the search under torch.no_grad() as with any model.)
    bos_id, eos_id  ints: begin and end of sequence
    beam_size       int >= 1: the width of the beam
    max_new_tokens  int >= 1: the most tokens a hypothesis may generate (EOS included)
    length_penalty  float: the ranking exponent below (0.0: rank by the summed log-probability)
Returns:
    [(ids, score), ...]: at most beam_size pairs, best first.
        ids    list of int (a Python list, not a tensor): the generated tokens, BOS excluded, ending with EOS
               if the hypothesis finished
        score  Python float: sum of the log-probabilities of ids / len(ids) ** length_penalty

The search (write it exactly like this):
    1. Start with one live hypothesis, [BOS], score 0.
    2. At every step, extend every live hypothesis by every token (score + log p(token | prefix)) and
       keep the beam_size best extensions of them all, by summed log-probability (one cut over all N * V).
    3. A kept extension that ends in EOS is finished: it leaves the beam (its slot is not refilled
       this step) and is never extended. The others are the live hypotheses of the next step.
    4. Stop when no hypothesis is live (do not call the model with no prefix), or after max_new_tokens
       steps; then the live ones count as finished too.
    5. Rank every finished hypothesis by score / len ** length_penalty (len = generated tokens, EOS
       included, BOS not) and return the beam_size best, best first, with that ranking score.
The length penalty only ranks at the end: pruning during the search uses the summed log-probability.
Ties do not occur with the checker's models.
"""

import torch
from torch import nn


def beam_search(model: nn.Module, bos_id: int, eos_id: int, beam_size: int, max_new_tokens: int,
                length_penalty: float = 0.0) -> list[tuple[list[int], float]]:
    raise NotImplementedError("write beam_search")
