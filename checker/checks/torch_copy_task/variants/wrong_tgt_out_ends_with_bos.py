# expect: one variable read where another belongs
"""Copy-paste: the target's last column is BOS."""

import torch
import torch.nn.functional as F
from torch import Tensor, nn


def make_copy_batch(batch_size: int, seq_len: int, vocab_size: int, generator: torch.Generator,
                    pad_id: int = 0, bos_id: int = 1, eos_id: int = 2) -> tuple[Tensor, Tensor, Tensor]:
    """(src (B, T), tgt_inp (B, T + 1), tgt_out (B, T + 1)), long; equal lengths, so no PAD."""
    # 1) the tokens to copy, drawn with the caller's generator (ids 0, 1, 2 are special)
    tokens = torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)  # (B, T)
    bos = torch.full((batch_size, 1), bos_id, dtype=torch.long)  # (B, 1)
    eos = torch.full((batch_size, 1), eos_id, dtype=torch.long)  # (B, 1)
    # 2) decoder input starts with BOS; the target is the same sequence shifted left, ending in EOS
    tgt_inp = torch.cat([bos, tokens], dim=1)  # (B, 1) + (B, T) -> (B, T + 1)
    tgt_out = torch.cat([tokens, bos], dim=1)  # (B, T) + (B, 1) -> (B, T + 1)
    return tokens, tgt_inp, tgt_out


def train_step(model: nn.Module, optimizer: torch.optim.Optimizer, src: Tensor, tgt_inp: Tensor, tgt_out: Tensor,
               pad_id: int = 0) -> float:
    """One optimisation step with teacher forcing; returns the batch's loss (PAD targets ignored)."""
    # 1) forward in training mode: logits for every target position
    model.train()
    logits = model(src, tgt_inp)  # (B, T_t) -> (B, T_t, V)
    # 2) cross-entropy over the vocabulary, averaged over the non-PAD targets
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), tgt_out.reshape(-1),  # (B*T_t, V), (B*T_t,)
                           ignore_index=pad_id)
    # 3) fresh gradients, backward, update
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
