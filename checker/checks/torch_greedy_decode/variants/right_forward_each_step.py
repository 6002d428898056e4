# followup: inputs on another device (meta)
"""Calls the full model(src, prefix) at every step (re-encodes: slower, same ids), inference_mode,
a Python list of finished flags, softmax before the argmax (which does not change it)."""
import torch


def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    model.eval()
    B = src.shape[0]
    done = [False] * B
    with torch.inference_mode():
        prefix = torch.tensor([[bos_id]] * B, dtype=torch.long)
        for _ in range(max_new_tokens):
            if all(done):
                break
            probs = torch.softmax(model(src, prefix)[:, -1, :], dim=-1)  # (B, V)
            chosen = probs.argmax(dim=-1).tolist()
            column = []
            for b in range(B):
                column.append(model.pad_id if done[b] else chosen[b])
                done[b] = done[b] or chosen[b] == eos_id
            prefix = torch.cat([prefix, torch.tensor(column, dtype=torch.long).unsqueeze(1)], dim=1)
    return prefix.clone()
