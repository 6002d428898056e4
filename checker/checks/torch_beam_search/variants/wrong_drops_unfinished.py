# expect: still live after max_new_tokens
"""Returns only the hypotheses that produced EOS; those cut by max_new_tokens are lost."""
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
        live = torch.cat([live[flat // V], (flat % V)[:, None]], dim=1)
        done = live[:, -1] == eos_id
        finished += [(ids[1:].tolist(), s) for ids, s in zip(live[done], top[done].tolist())]
        live, live_scores = live[~done], top[~done]
        if len(live) == 0:
            break
    ranked = sorted(((ids, s / len(ids) ** length_penalty) for ids, s in finished), key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]
