# followup: the Annotated Transformer's order: backward, step, zero_grad
"""The Annotated Transformer's run_epoch order (loss.backward(); optimizer.step(); optimizer.zero_grad(
set_to_none=True)), adapted to the kata's train_step; seed 003's teacher forcing and loss."""
import torch
import torch.nn.functional as F


def make_copy_batch(batch_size, seq_len, vocab_size, generator, pad_id=0, bos_id=1, eos_id=2):
    data = torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)
    bos = torch.full((batch_size, 1), bos_id, dtype=torch.long)
    eos = torch.full((batch_size, 1), eos_id, dtype=torch.long)
    return data, torch.cat([bos, data], dim=1), torch.cat([data, eos], dim=1)


def train_step(model, optimizer, src, tgt_inp, tgt_out, pad_id=0):
    model.train()
    out = model(src, tgt_inp)
    loss = F.cross_entropy(out.contiguous().view(-1, out.size(-1)), tgt_out.contiguous().view(-1),
                           ignore_index=pad_id)
    loss.backward()
    optimizer.step()
    optimizer.zero_grad(set_to_none=True)
    return loss.item()
