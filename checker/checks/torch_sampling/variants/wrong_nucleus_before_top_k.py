# expect: your nucleus is computed on the full distribution, before top-k
"""Computes both masks on the tempered logits independently and ANDs them: top-p never sees top-k's cut."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature <= 0:
        raise ValueError("temperature must be > 0")
    scores = logits / temperature
    keep = torch.ones_like(scores, dtype=torch.bool)
    if top_k and top_k < scores.size(-1):
        keep &= scores >= scores.topk(top_k, dim=-1).values[..., -1:]
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = scores.sort(dim=-1, descending=True)
        probs = sorted_scores.softmax(-1)
        keep_sorted = probs.cumsum(-1) - probs < top_p
        keep &= keep_sorted.scatter(-1, order, keep_sorted)
    return scores.masked_fill(~keep, float("-inf"))


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(-1)
    probs = filter_logits(logits, temperature, top_k, top_p).softmax(-1)
    return torch.multinomial(probs.reshape(-1, probs.size(-1)), 1, generator=generator).view(probs.shape[:-1])
