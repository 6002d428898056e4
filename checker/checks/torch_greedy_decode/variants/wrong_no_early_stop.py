# expect: a branch taken always, or never (training, eval, a flag)
"""Pads after EOS correctly but always runs max_new_tokens steps."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens):
        next_id = model.out_proj(model.decode(ys, memory, src)[:, -1]).argmax(-1)
        next_id = next_id.masked_fill(finished, model.pad_id)
        ys = torch.cat([ys, next_id[:, None]], dim=1)
        finished |= next_id == eos_id
    return ys
