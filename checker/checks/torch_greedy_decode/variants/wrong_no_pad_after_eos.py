# expect: two statements in the other order (a value read before it is updated, or after)
"""Stops when all have finished, but lets finished sequences go on with the model's tokens."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens):
        next_id = model.out_proj(model.decode(ys, memory, src)[:, -1]).argmax(-1)
        ys = torch.cat([ys, next_id[:, None]], dim=1)
        finished |= next_id == eos_id
        if finished.all():
            break
    return ys
