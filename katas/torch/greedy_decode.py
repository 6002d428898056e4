"""Greedy decoding with an encoder-decoder Transformer.

Shape legend:
    B      batch size
    T_s    source length
    T      length of the prefix decoded so far (1 at the first step: BOS alone)
    T_out  length of the result: 1 (BOS) + the number of steps run, at most 1 + max_new_tokens
    D      d_model
    V      target vocabulary size

Implement greedy_decode(model, src, bos_id, eos_id, max_new_tokens).

The model is the full Transformer kata's model (the interview tutorial's):
    model.encode(src) -> memory               (B, T_s) long -> (B, T_s, D)
    model.decode(tgt, memory, src) -> hidden  (B, T) long -> (B, T, D); builds its own masks from PAD
    model.out_proj                            nn.Linear(D, V): hidden states -> logits
    model.pad_id                              the PAD id (an int)

Arguments:
    model           the Transformer above (handed over in whatever mode it was left in)
    src             (B, T_s) long, source ids (rows may end in PAD)
    bos_id, eos_id  ints: the begin- and end-of-sequence ids
    max_new_tokens  int >= 0: the most tokens to generate after BOS
Returns:
    ids  (B, T_out) long: column 0 is BOS, column t the token chosen at step t.

Rules:
    1. Decoding is inference: call model.eval() (dropout off) and run without gradients (torch.no_grad()).
    2. Encode src once. At every step decode the WHOLE prefix generated so far, take the logits at
       its LAST position and pick the argmax (no sampling); append it to the prefix.
    3. A sequence that has produced eos_id is finished: from the next step on it receives
       model.pad_id instead of the model's choice.
    4. Stop after max_new_tokens steps, or as soon as every sequence is finished.
Do not modify src.
"""

import torch
from torch import Tensor, nn


def greedy_decode(model: nn.Module, src: Tensor, bos_id: int, eos_id: int, max_new_tokens: int) -> Tensor:
    raise NotImplementedError("write greedy_decode")
