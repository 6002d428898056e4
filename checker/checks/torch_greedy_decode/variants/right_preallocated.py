# followup: inputs on another device (meta)
"""Preallocates the output filled with PAD and writes one column per step; trims at the end."""
import torch


def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    was_training = model.training
    model.train(False)
    with torch.no_grad():
        memory = model.encode(src)
        B = src.size(0)
        out = torch.full((B, max_new_tokens + 1), model.pad_id, dtype=torch.long)
        out[:, 0] = bos_id
        alive = torch.ones(B, dtype=torch.bool)
        length = 1
        while length <= max_new_tokens and alive.any():
            hidden = model.decode(out[:, :length], memory, src)
            logits = model.out_proj(hidden)[:, length - 1]
            token = torch.max(logits, dim=1).indices
            out[:, length] = torch.where(alive, token, torch.full_like(token, model.pad_id))
            alive = alive & (token != eos_id)
            length += 1
    model.train(was_training)  # put the model back as it came: allowed, decoding itself ran in eval mode
    return out[:, :length]
