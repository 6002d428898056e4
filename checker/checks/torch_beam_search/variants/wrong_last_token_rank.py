# expect: best LAST-token log-probability
"""Prunes the beam by the log-probability of the newest token instead of the hypothesis' total."""
import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_new_tokens):
        logp = model(torch.tensor([ids for ids, _ in beams]))
        cands = []
        for (ids, score), row in zip(beams, logp.tolist()):
            for tok, lp in enumerate(row):
                cands.append((lp, ids + [tok], score + lp))
        cands.sort(key=lambda c: c[0], reverse=True)
        beams = []
        for _, ids, score in cands[:beam_size]:
            (finished if ids[-1] == eos_id else beams).append((ids, score))
        if not beams:
            break
    finished += beams
    ranked = sorted(((ids[1:], s / (len(ids) - 1) ** length_penalty) for ids, s in finished),
                    key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]
