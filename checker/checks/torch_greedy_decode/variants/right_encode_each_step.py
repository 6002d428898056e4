# followup: model.encode ran 5 times for 3 sources
"""Runs model.encode(src) again inside the loop at every step (same memory each time, so the same ids)."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    B = src.size(0)
    ys = torch.ones(B, 1, dtype=torch.long).fill_(bos_id)
    finished = torch.zeros(B, dtype=torch.bool)
    for _ in range(max_new_tokens):
        memory = model.encode(src)  # (B, T_s, D)
        out = model.decode(ys, memory, src)  # (B, T, D)
        next_word = model.out_proj(out[:, -1]).argmax(dim=-1)  # (B,)
        next_word = torch.where(finished, torch.full_like(next_word, model.pad_id), next_word)
        ys = torch.cat([ys, next_word.unsqueeze(1)], dim=1)
        finished = finished | (next_word == eos_id)
        if finished.all():
            break
    return ys
