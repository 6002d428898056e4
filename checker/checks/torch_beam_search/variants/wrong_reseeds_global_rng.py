# expect: the call of beam_search moved torch's global random state
"""Right beams, but the search seeds torch's global generator "for reproducibility" on every call: whatever
the caller draws next (dropout masks, sampled batches) repeats the same numbers after each search."""
import torch
from torch import nn


@torch.no_grad()
def beam_search(model: nn.Module, bos_id: int, eos_id: int, beam_size: int, max_new_tokens: int,
                length_penalty: float = 0.0) -> list[tuple[list[int], float]]:
    """[(ids without BOS, score)], best first, at most beam_size of them."""
    torch.manual_seed(0)  # "reproducible" beams
    # 1) one live hypothesis, BOS alone, score 0
    live = torch.full((1, 1), bos_id, dtype=torch.long)  # (N, t)
    live_scores = torch.zeros(1, dtype=torch.float64)  # (N,)
    finished = []  # (ids without BOS, summed log-probability)
    for _ in range(max_new_tokens):
        # 2) extend every live hypothesis by every token
        logp = model(live)  # (N, t) -> (N, V)
        V = logp.size(-1)
        candidates = (live_scores[:, None] + logp).reshape(-1)  # (N, 1) + (N, V) -> (N * V,)
        # 3) keep the beam_size best extensions overall
        top, flat = candidates.topk(min(beam_size, candidates.numel()))  # (K,), (K,)
        parent, token = flat // V, flat % V  # (K,): which hypothesis, which token
        live = torch.cat([live[parent], token[:, None]], dim=1)  # (K, t) + (K, 1) -> (K, t + 1)
        # 4) an extension ending in EOS is finished; the others stay live
        done = token == eos_id  # (K,)
        finished += [(ids[1:].tolist(), score) for ids, score in zip(live[done], top[done].tolist())]
        live, live_scores = live[~done], top[~done]
        if live.size(0) == 0:
            break
    # 5) after max_new_tokens steps the live hypotheses count as finished
    finished += [(ids[1:].tolist(), score) for ids, score in zip(live, live_scores.tolist())]
    # 6) rank by score / len ** length_penalty (len: generated tokens, EOS included, BOS not)
    ranked = sorted(((ids, score / len(ids) ** length_penalty) for ids, score in finished),
                    key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]
