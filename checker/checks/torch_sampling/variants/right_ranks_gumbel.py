"""Ranks instead of a scattered mask (keep the first n of the sorted order), kthvalue for top-k,
and the Gumbel-max trick for sampling: argmax(scores + Gumbel noise) is a draw from softmax(scores)."""
import torch


def filter_logits(logits, temperature=1.0, top_k=None, top_p=None):
    if temperature <= 0:
        raise ValueError("temperature must be positive")
    scores = logits / temperature
    V = scores.size(-1)
    if top_k and top_k < V:
        kth = -torch.kthvalue(-scores, top_k, dim=-1, keepdim=True).values  # k-th largest
        scores = torch.where(scores >= kth, scores, torch.full_like(scores, float("-inf")))
    if top_p is not None and top_p < 1.0:
        sorted_scores, order = torch.sort(scores, dim=-1, descending=True)
        probs = torch.softmax(sorted_scores, dim=-1)
        n_keep = ((torch.cumsum(probs, dim=-1) - probs) < top_p).sum(dim=-1, keepdim=True)  # (..., 1)
        rank = torch.argsort(order, dim=-1)  # rank[j]: position of token j in the sorted order
        scores = torch.where(rank < n_keep, scores, torch.full_like(scores, float("-inf")))
    return scores


def sample_next_token(logits, temperature=1.0, top_k=None, top_p=None, generator=None):
    if temperature == 0:
        return logits.argmax(-1)
    scores = filter_logits(logits, temperature, top_k, top_p)
    u = torch.rand(scores.shape, generator=generator, dtype=scores.dtype).clamp_min(1e-300)
    gumbel = -torch.log(-torch.log(u))
    return (scores + gumbel).argmax(-1)
