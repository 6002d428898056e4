# expect: EOS's log-probability is missing
"""Retires a hypothesis when EOS is chosen, but keeps the score it had before the EOS."""
import torch


@torch.no_grad()
def beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    live = torch.full((1, 1), bos_id, dtype=torch.long)
    live_scores = torch.zeros(1, dtype=torch.float64)
    finished = []
    for _ in range(max_new_tokens):
        logp = model(live)
        V = logp.size(-1)
        top, flat = (live_scores[:, None] + logp).reshape(-1).topk(min(beam_size, logp.numel()))
        parent, token = flat // V, flat % V
        new = torch.cat([live[parent], token[:, None]], dim=1)
        done = token == eos_id
        for ids, p in zip(new[done], parent[done]):
            finished.append((ids[1:].tolist(), float(live_scores[p])))  # the score before EOS
        live, live_scores = new[~done], top[~done]
        if len(live) == 0:
            break
    finished += [(ids[1:].tolist(), float(s)) for ids, s in zip(live, live_scores)]
    finished = [(ids, s / len(ids) ** length_penalty) for ids, s in finished]
    return sorted(finished, key=lambda h: -h[1])[:beam_size]
