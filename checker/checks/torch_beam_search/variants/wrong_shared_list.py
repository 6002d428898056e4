# expect: appending to a list two hypotheses share
"""Hypotheses kept as Python lists; each extension does new = ids; new.append(tok), which appends to the parent's
list itself, so all the extensions of one parent share one growing list."""
import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    beams = [([bos_id], 0.0)]
    finished = []
    for _ in range(max_new_tokens):
        candidates = []
        for ids, score in beams:
            logp = model(torch.tensor([ids]))[0]
            for tok, lp in enumerate(logp.tolist()):
                candidates.append((score + lp, ids, tok))
        candidates.sort(key=lambda c: c[0], reverse=True)
        beams = []
        for score, ids, tok in candidates[:beam_size]:
            new = ids
            new.append(tok)
            if tok == eos_id:
                finished.append((new[1:], score))
            else:
                beams.append((new, score))
        if not beams:
            break
    finished += [(ids[1:], score) for ids, score in beams]
    ranked = [(ids, score / len(ids) ** length_penalty) for ids, score in finished]
    ranked.sort(key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]
