"""Train a Transformer on the copy task (the interview tutorial's toy task).

Shape legend:
    B    batch size
    T    sequence length (seq_len)
    T_t  target length, T + 1
    V    vocabulary size: PAD = 0, BOS = 1, EOS = 2 by default; the tokens to copy are 3 .. V-1

Write two functions.

make_copy_batch(batch_size, seq_len, vocab_size, generator, pad_id=0, bos_id=1, eos_id=2)
    -> (src, tgt_inp, tgt_out)
    Draw the tokens with exactly this call (the checker replays it with the same generator):
        tokens = torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)
    src      (B, T)    long  the tokens
    tgt_inp  (B, T_t)  long  BOS, then the tokens         (what the decoder reads)
    tgt_out  (B, T_t)  long  the tokens, then EOS         (what it must predict)
    All rows have the same length, so a batch holds no PAD (pad_id is there for padded variants).

train_step(model, optimizer, src, tgt_inp, tgt_out, pad_id=0) -> float
    One optimisation step with teacher forcing, on a batch that may contain PAD
    (src (B, T_s), tgt_inp and tgt_out (B, T_t), long):
    1. put the model in training mode;
    2. logits = model(src, tgt_inp), shape (B, T_t, V);
    3. loss = cross-entropy between the logits and tgt_out over the vocabulary, averaged over the
       target positions that are not pad_id (PAD targets count for nothing);
    4. clear the old gradients, backpropagate, update the weights with the optimizer;
    5. return the loss as a Python float.

The model is the full Transformer kata's: model(src, tgt) -> logits (B, T_t, V), with its masks
built inside from PAD.
"""

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def make_copy_batch(batch_size: int, seq_len: int, vocab_size: int, generator: torch.Generator,
                    pad_id: int = 0, bos_id: int = 1, eos_id: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    raise NotImplementedError("write make_copy_batch")


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, src: Tensor, tgt_inp: Tensor, tgt_out: Tensor,
               pad_id: int = 0) -> float:
    raise NotImplementedError("write train_step")
