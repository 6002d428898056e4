"""One function per step of the paper's algorithm: propose, verify, accept; rounds by recursion."""
import torch


def _greedy_next(model, ids):
    return int(torch.argmax(model(torch.tensor(ids).unsqueeze(0))[0, -1]))


def _propose(draft, seq, g):
    out = []
    for _ in range(g):
        out.append(_greedy_next(draft, seq + out))
    return out


def _verify(target, seq, drafts):
    logits = target(torch.tensor(seq + drafts).unsqueeze(0))[0]  # (t + g, V)
    return [int(x) for x in torch.argmax(logits[len(seq) - 1:], dim=-1)]


def _accept(drafts, choices):
    for j, (d, p) in enumerate(zip(drafts, choices)):
        if d != p:
            return drafts[:j] + [p]
    return drafts + [choices[len(drafts)]]


def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    with torch.no_grad():
        def go(seq, left):
            if left <= 0:
                return []
            drafts = _propose(draft, seq, min(k, left))
            new = _accept(drafts, _verify(target, seq, drafts))[:left]
            if eos_id in new:
                return new[: new.index(eos_id) + 1]
            return new + go(seq + new, left - len(new))

        return go(list(prompt), max_new_tokens)
