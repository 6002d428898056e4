"""Seed 003's training loop body as train_step (criterion, reshape(-1, V), zero_grad, backward, step),
with the kata's pad_id and generator."""
import torch
from torch import nn


def make_copy_batch(batch_size, seq_len, vocab_size, generator, pad_id=0, bos_id=1, eos_id=2):
    src = torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)
    tgt_inp = torch.cat([torch.full((batch_size, 1), bos_id), src], dim=1)
    tgt_out = torch.cat([src, torch.full((batch_size, 1), eos_id)], dim=1)
    return src, tgt_inp, tgt_out


def train_step(model, optimizer, src, tgt_inp, tgt_out, pad_id=0):
    model.train()
    criterion = nn.CrossEntropyLoss(ignore_index=pad_id)
    logits = model(src, tgt_inp)  # (B,T+1,V)
    V = logits.size(-1)
    loss = criterion(logits.reshape(-1, V), tgt_out.reshape(-1))
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    return loss.item()
