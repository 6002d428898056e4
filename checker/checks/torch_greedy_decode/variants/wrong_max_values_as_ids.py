# expect: your next tokens are the largest logit VALUES cast to ids
"""Appends the max logit VALUES (torch.max(...)[0]) instead of the argmax ids as the next tokens."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens):
        out = model.decode(ys, memory, src)
        prob = model.out_proj(out[:, -1])  # (B, V)
        next_word = torch.max(prob, dim=-1)[0]  # (B,)
        next_word = next_word.type_as(ys).masked_fill(finished, model.pad_id)
        ys = torch.cat([ys, next_word[:, None]], dim=1)
        finished |= next_word == eos_id
        if finished.all():
            break
    return ys
