# expect: your nucleus stops BEFORE the token that crosses top_p
"""Keeps the tokens whose cumulative probability (itself included) stays <= top_p: the crossing token is lost."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    scores = logits / temperature
    if top_k and top_k < scores.size(-1):
        kth = torch.topk(scores, top_k).values[..., -1:]
        scores = scores.masked_fill(scores < kth, float("-inf"))
    if top_p is not None and top_p < 1.0:
        sorted_scores, idx = torch.sort(scores, descending=True)
        cum = torch.cumsum(torch.softmax(sorted_scores, dim=-1), dim=-1)
        remove = cum > top_p
        remove[..., 0] = False  # keep at least one token
        scores = scores.masked_fill(remove.scatter(-1, idx, remove), float("-inf"))
    return scores


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(-1)
    probs = torch.softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)
    return torch.multinomial(probs.reshape(-1, probs.size(-1)), 1, generator=generator).view(probs.shape[:-1])
