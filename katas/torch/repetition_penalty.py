"""Repetition, frequency and presence penalties on the next token's logits, before sampling.

Shape legend:
    B  batch: sequences decoded side by side
    V  vocabulary size
    T  tokens generated so far in each sequence (every row has T of them)

Implement apply_penalties(logits, generated, penalty, frequency_penalty, presence_penalty): the two families of
penalties a decoder applies to discourage repeats, in this order (vLLM's):

1. CTRL's repetition penalty (Keskar et al. 2019, §4.1) as Hugging Face's RepetitionPenaltyLogitsProcessor applies
   it: for every token id that appears in generated[b], its logit in row b is

       logit / penalty    if logit > 0       (less likely)
       logit * penalty    if logit < 0       (less likely too: more negative)

   A token generated several times is penalised ONCE (its logit is rescaled once, not once per occurrence).
   penalty = 1 changes nothing; penalty > 1 discourages repeats.

2. OpenAI's frequency and presence penalties (the Chat Completions API's parameters), on the result of 1:

       logit[b, v] - count[b, v] · frequency_penalty - (count[b, v] > 0) · presence_penalty

   where count[b, v] is how many times token v appears in generated[b]. Either may be negative (to encourage
   repeats); 0 changes nothing.

Arguments:
    logits             (B, V) float: the next token's logits, one row per sequence
    generated          (B, T) torch.int64: the token ids generated so far in each row, each in [0, V); T >= 1
    penalty            float > 0, default 1.0 (CTRL's paper uses 1.2)
    frequency_penalty  float, default 0.0 (OpenAI allows -2.0 .. 2.0)
    presence_penalty   float, default 0.0 (OpenAI allows -2.0 .. 2.0)
returns (B, V) in logits' dtype: the penalised logits. Rows are independent.

Rules: do not modify the inputs (the caller's logits stay as they were).
Off limits: transformers, vllm.
"""

import torch
from torch import Tensor


def apply_penalties(logits: Tensor, generated: Tensor, penalty: float = 1.0, frequency_penalty: float = 0.0,
                    presence_penalty: float = 0.0) -> Tensor:
    raise NotImplementedError("write apply_penalties: CTRL's penalty once per generated token, then the counts'")
