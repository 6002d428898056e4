"""Each hypothesis proposes its own top beam_size extensions, then ONE global cut (heapq.nlargest):
equivalent to the cut over all N * V, since a global winner is always among its parent's top beam_size."""
import heapq

import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    beams = [(0.0, [bos_id])]
    finished = []
    for _ in range(max_new_tokens):
        logp = model(torch.tensor([ids for _, ids in beams], dtype=torch.long))
        top, idx = logp.topk(min(beam_size, logp.size(-1)), dim=-1)  # (N, k) per hypothesis
        proposals = [(score + lp, ids + [tok])
                     for (score, ids), lps, toks in zip(beams, top.tolist(), idx.tolist())
                     for lp, tok in zip(lps, toks)]
        kept = heapq.nlargest(beam_size, proposals, key=lambda p: p[0])
        finished += [(s, ids) for s, ids in kept if ids[-1] == eos_id]
        beams = [(s, ids) for s, ids in kept if ids[-1] != eos_id]
        if not beams:
            break
    finished += beams

    def rank(item):
        score, ids = item
        n = len(ids) - 1  # BOS is not generated
        return score / n ** length_penalty

    best = heapq.nlargest(beam_size, finished, key=rank)
    return [(ids[1:], rank((s, ids))) for s, ids in best]
