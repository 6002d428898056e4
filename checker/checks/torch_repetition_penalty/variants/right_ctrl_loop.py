"""Hugging Face's enforce_repetition_penalty_ of transformers 2.x-3.x (generation_utils.py), CTRL's rule after the
fix for negative logits: a loop over set(prev_output_tokens[i].tolist()), multiply if the logit is < 0, else
divide; then OpenAI's frequency and presence penalties with Python's collections.Counter, token by token."""
from collections import Counter

import torch


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    lprobs = logits.clone()
    for i in range(lprobs.shape[0]):
        for previous_token in set(generated[i].tolist()):
            if lprobs[i, previous_token] < 0:
                lprobs[i, previous_token] *= penalty
            else:
                lprobs[i, previous_token] /= penalty
    for i in range(lprobs.shape[0]):
        for token, count in Counter(generated[i].tolist()).items():
            lprobs[i, token] -= count * frequency_penalty + presence_penalty
    return lprobs
