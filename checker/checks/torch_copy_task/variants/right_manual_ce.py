"""A hand-written cross-entropy (log_softmax, gather, masked mean); batches filled by index."""
import torch


def make_copy_batch(batch_size, seq_len, vocab_size, generator, pad_id=0, bos_id=1, eos_id=2):
    tokens = torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)
    tgt_inp = tokens.new_full((batch_size, seq_len + 1), bos_id)
    tgt_inp[:, 1:] = tokens
    tgt_out = tokens.new_full((batch_size, seq_len + 1), eos_id)
    tgt_out[:, :-1] = tokens
    return tokens.clone(), tgt_inp, tgt_out


def train_step(model, optimizer, src, tgt_inp, tgt_out, pad_id=0):
    model.train(True)
    log_probs = torch.log_softmax(model(src, tgt_inp), dim=-1)  # (B, T_t, V)
    keep = tgt_out != pad_id
    safe = tgt_out.masked_fill(~keep, 0)
    picked = log_probs.gather(-1, safe.unsqueeze(-1)).squeeze(-1)  # (B, T_t)
    loss = -(picked * keep).sum() / keep.sum()
    for p in model.parameters():
        p.grad = None
    loss.backward()
    optimizer.step()
    return loss.item()
