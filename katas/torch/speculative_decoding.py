"""Speculative decoding with greedy acceptance: a small draft model proposes, the target verifies.

Shape legend:
    t    tokens in the sequence so far (prompt + generated), at a model call
    k    tokens the draft proposes per round
    V    vocabulary size

Implement speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id).

Arguments:
    target, draft   causal language models: model(ids) -> logits, ids (1, t) int64 (one sequence),
                    logits (1, t, V) float: logits[0, i] scores the token that FOLLOWS ids[0, :i + 1].
                    (The checker's models are fixed tables; call them under torch.no_grad().)
    prompt          list[int], at least one token. Do not modify it.
    max_new_tokens  int >= 1: the most tokens to generate
    k               int >= 1: draft tokens per round
    eos_id          int or None: generation stops right after this token (it is returned)
Returns:
    list[int] (a Python list): the generated tokens, prompt excluded; at most max_new_tokens, ending
    with eos_id if the target produced it. It must EQUAL the target's own greedy decode: repeatedly
    argmax(target(seq)[0, -1]), appended, until eos_id or max_new_tokens tokens.

One round (Leviathan et al. 2023 / Chen et al. 2023, with greedy acceptance):
    1. Draft: g = min(k, max_new_tokens - generated). The draft proposes d_1..d_g greedily, one call
       each, every call on seq + the proposals so far: d_j = argmax(draft(seq + d_1..d_{j-1})[0, -1]).
    2. Verify: ONE target call on seq + d_1..d_g. Its logits at the last g + 1 positions give the
       target's own choices p_1..p_{g+1} (p_j = argmax of logits[0, len(seq) - 1 + j - 1]).
    3. Accept: n = the number of leading drafts that equal the target's choice (d_1 = p_1, ..., d_n = p_n,
       and d_{n+1} != p_{n+1} or n = g). Append d_1..d_n, then the target's p_{n+1}: the correction of
       the first wrong draft, or, when all g were accepted, a bonus token. A round adds n + 1 tokens.
    4. Cut after eos_id if one of the new tokens is eos_id (and stop), or at max_new_tokens.
The count of target calls: exactly one per round, nothing else (the checks count them and compare
with this algorithm's count on each case). With the target as its own draft every proposal is
accepted: ceil(max_new_tokens / (k + 1)) target calls; with a draft that is always wrong, one per token.
Ties in argmax do not occur with the checker's models.
"""

import torch
from torch import nn


def speculative_decode(target: nn.Module, draft: nn.Module, prompt: list[int], max_new_tokens: int, k: int,
                       eos_id: int | None) -> list[int]:
    raise NotImplementedError("write speculative_decode: draft k tokens, verify them in one target call, accept")
