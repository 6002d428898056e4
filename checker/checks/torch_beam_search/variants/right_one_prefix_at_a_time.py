"""Calls the model on one prefix at a time and keeps the hypotheses in dicts; sorts a flat candidate list."""
import math

import torch


def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    live = {(bos_id,): 0.0}
    done = {}
    with torch.no_grad():
        for _ in range(max_new_tokens):
            candidates = []
            for prefix, score in live.items():
                row = model(torch.tensor([list(prefix)]))[0]
                for token in range(row.numel()):
                    candidates.append((score + row[token].item(), prefix + (token,)))
            candidates.sort(reverse=True)
            live = {}
            for score, seq in candidates[:beam_size]:
                if seq[-1] == eos_id:
                    done[seq] = score
                else:
                    live[seq] = score
            if not live:
                break
    done.update(live)
    scored = [(list(seq[1:]), s / math.pow(len(seq) - 1, length_penalty)) for seq, s in done.items()]
    scored.sort(key=lambda h: h[1], reverse=True)
    return scored[:beam_size]
