# expect: the target was called
"""Verifies with one target call, but when every draft is accepted asks the target a second time for the bonus
token instead of reading it from the verification call's last position: right tokens, one call too many."""
import torch
from torch import nn


def _next(model: nn.Module, seq: list[int]) -> int:
    """The model's greedy choice after seq."""
    logits = model(torch.tensor([seq]))  # (1, t) -> (1, t, V)
    return int(logits[0, -1].argmax())


@torch.no_grad()
def speculative_decode(target: nn.Module, draft: nn.Module, prompt: list[int], max_new_tokens: int, k: int,
                       eos_id: int | None) -> list[int]:
    seq, out = list(prompt), []
    while len(out) < max_new_tokens:
        # 1) draft: g proposals, each on seq + the proposals before it
        g = min(k, max_new_tokens - len(out))
        drafts = []
        for _ in range(g):
            drafts.append(_next(draft, seq + drafts))
        # 2) verify: one target call scores all g drafts; its last g + 1 positions are its own choices
        logits = target(torch.tensor([seq + drafts]))  # (1, t + g) -> (1, t + g, V)
        choices = logits[0, len(seq) - 1:-1].argmax(dim=-1).tolist()  # (g,): the target's choice at each draft
        n = 0
        while n < g and drafts[n] == choices[n]:
            n += 1
        if n < g:
            new = drafts[:n] + [choices[n]]
        else:  # every draft accepted: ask the target once more for the token after them
            bonus = target(torch.tensor([seq + drafts]))[0, -1].argmax().item()
            new = drafts + [bonus]
        # 4) stop right after EOS
        if eos_id in new:
            new = new[: new.index(eos_id) + 1]
            out += new
            break
        out += new
        seq += new
    return out[:max_new_tokens]
