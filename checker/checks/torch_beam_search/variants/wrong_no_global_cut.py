# expect: more than beam_size
"""Each hypothesis keeps its own top beam_size extensions, and all of them go on: the beam grows."""
import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_new_tokens):
        logp = model(torch.tensor([ids for ids, _ in beams]))
        k = min(beam_size, logp.size(-1))
        top, idx = logp.topk(k, dim=-1)
        new_beams = []
        for (ids, s), lps, toks in zip(beams, top.tolist(), idx.tolist()):
            for lp, t in zip(lps, toks):
                (finished if t == eos_id else new_beams).append((ids + [t], s + lp))
        beams = new_beams
        if not beams:
            break
    finished += beams
    ranked = sorted(((ids[1:], s / (len(ids) - 1) ** length_penalty) for ids, s in finished),
                    key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]
