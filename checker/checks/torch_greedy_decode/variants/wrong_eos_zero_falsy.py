# expect: case 5
"""EOS is tested with `if eos_id:`, as if 0 meant none: a vocabulary whose EOS is id 0 never finishes."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long, device=src.device)
    done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
    for _ in range(max_new_tokens):
        nxt = model.out_proj(model.decode(ys, memory, src)[:, -1]).argmax(-1)
        nxt = nxt.masked_fill(done, model.pad_id)
        ys = torch.cat([ys, nxt[:, None]], 1)
        if eos_id:
            done |= nxt == eos_id
        if done.all():
            break
    return ys
