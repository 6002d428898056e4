# expect: goes on after EOS
"""Treats EOS like any token: hypotheses that produced EOS stay in the beam and are extended."""
import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    seqs = torch.full((1, 1), bos_id, dtype=torch.long)
    scores = torch.zeros(1, dtype=torch.float64)
    for _ in range(max_new_tokens):
        logp = model(seqs)
        V = logp.size(-1)
        top, idx = (scores[:, None] + logp).flatten().topk(min(beam_size, logp.numel()))
        seqs = torch.cat([seqs[idx // V], (idx % V)[:, None]], dim=1)
        scores = top
    n = seqs.size(1) - 1
    return [(s[1:].tolist(), float(sc) / n ** length_penalty) for s, sc in zip(seqs, scores)]
