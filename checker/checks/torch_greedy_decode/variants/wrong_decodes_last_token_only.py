# expect: an off-by-one in a range, slice, index or position
"""Feeds only the last token to the decoder, as if it had a cache."""

import torch
from torch import Tensor, nn


@torch.no_grad()
def greedy_decode(model: nn.Module, src: Tensor, bos_id: int, eos_id: int, max_new_tokens: int) -> Tensor:
    """Ids (B, T_out) starting with BOS: at each step the argmax at the last position of the prefix."""
    # 1) inference: dropout off; encode the source once
    model.eval()
    memory = model.encode(src)  # (B, T_s) -> (B, T_s, D)
    B = src.size(0)
    ys = torch.full((B, 1), bos_id, dtype=torch.long, device=src.device)  # (B, 1): BOS
    finished = torch.zeros(B, dtype=torch.bool, device=src.device)  # (B,)
    for _ in range(max_new_tokens):
        # 2) decode the whole prefix; the next token comes from its last position
        hidden = model.decode(ys[:, -1:], memory, src)  # (B, T) -> (B, T, D)
        next_id = model.out_proj(hidden[:, -1]).argmax(dim=-1)  # (B, D) -> (B, V) -> (B,)
        # 3) finished sequences get PAD; append; a new EOS finishes its sequence
        next_id = next_id.masked_fill(finished, model.pad_id)
        ys = torch.cat([ys, next_id[:, None]], dim=1)  # (B, T) + (B, 1) -> (B, T + 1)
        finished = finished | (next_id == eos_id)
        # 4) stop as soon as every sequence is finished
        if finished.all():
            break
    return ys
