"""nn.CrossEntropyLoss over (B, V, T_t) logits (the class axis second), batches built with F.pad."""
import torch
import torch.nn.functional as F
from torch import nn


def make_copy_batch(batch_size, seq_len, vocab_size, generator, pad_id=0, bos_id=1, eos_id=2):
    src = torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)
    tgt_inp = F.pad(src, (1, 0), value=bos_id)  # prepend BOS
    tgt_out = F.pad(src, (0, 1), value=eos_id)  # append EOS
    return src, tgt_inp, tgt_out


def train_step(model, optimizer, src, tgt_inp, tgt_out, pad_id=0):
    model.train()
    optimizer.zero_grad(set_to_none=True)
    logits = model(src, tgt_inp)  # (B, T_t, V)
    criterion = nn.CrossEntropyLoss(ignore_index=pad_id)
    loss = criterion(logits.permute(0, 2, 1), tgt_out)  # (B, V, T_t) vs (B, T_t)
    loss.backward()
    optimizer.step()
    return float(loss.detach())
