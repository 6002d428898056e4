# expect: an off-by-one in a range, slice, index or position
"""Takes the logits at position 0 of the prefix instead of the last position."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens):
        logits = model.out_proj(model.decode(ys, memory, src))  # (B, T, V)
        next_id = logits[:, 0].argmax(-1)
        next_id = next_id.masked_fill(finished, model.pad_id)
        ys = torch.cat([ys, next_id[:, None]], dim=1)
        finished |= next_id == eos_id
        if finished.all():
            break
    return ys
