# expect: called right after case 1
"""Allocates the output ids once and keeps them on the model "to save allocations": right on a new model, but
the next call on the same model writes into the first call's buffer, sized for the first batch and length."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    B = src.size(0)
    if getattr(model, "_ids", None) is None:
        model._ids = torch.empty(B, 1 + max_new_tokens, dtype=torch.long, device=src.device)
    ids = model._ids
    ids[:, 0] = bos_id
    memory = model.encode(src)
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)
    length = 1
    for _ in range(max_new_tokens):
        next_id = model.out_proj(model.decode(ids[:, :length], memory, src)[:, -1]).argmax(-1)
        next_id = next_id.masked_fill(finished, model.pad_id)
        ids[:, length] = next_id
        length += 1
        finished |= next_id == eos_id
        if finished.all():
            break
    return ids[:, :length].clone()
