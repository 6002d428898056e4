# expect: Hugging Face's rule
"""Hugging Face's bookkeeping: EOS candidates among the top beam_size retire, and the beam is refilled
with the next best live candidates, so it always holds beam_size live hypotheses."""
import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_new_tokens):
        logp = model(torch.tensor([ids for ids, _ in beams])).tolist()
        cands = sorted(((ids + [t], s + lp) for (ids, s), row in zip(beams, logp) for t, lp in enumerate(row)),
                       key=lambda c: c[1], reverse=True)
        new_beams = []
        for rank, (ids, s) in enumerate(cands):
            if ids[-1] == eos_id:
                if rank < beam_size:
                    finished.append((ids, s))
            elif len(new_beams) < beam_size:
                new_beams.append((ids, s))
        beams = new_beams
        if not beams:
            break
    finished += beams
    ranked = sorted(((ids[1:], s / (len(ids) - 1) ** length_penalty) for ids, s in finished),
                    key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]
