# expect: the interview tutorial's
"""Seed 003's loop: stops only when every sequence emits EOS at the same step; no PAD after EOS."""
import torch


@torch.no_grad()
def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    memory = model.encode(src)
    B = src.size(0)
    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)
    for _ in range(max_new_tokens):
        y = model.decode(ys, memory, src)
        logits = model.out_proj(y)  # (B,T,d_vocab)
        next_token = logits[:, -1].argmax(dim=-1, keepdim=True)  # (B,1)
        ys = torch.cat([ys, next_token], dim=1)
        if (next_token == eos_id).all():
            break
    return ys
