"""Hugging Face's assisted generation, greedy case, on one sequence: draft candidates, one target forward,
n_matches = ((~(candidates == selected)).cumsum(-1) < 1).sum(), keep selected[: n_matches + 1]."""
import torch


@torch.no_grad()
def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    input_ids = torch.tensor([prompt])  # (1, t)
    start = input_ids.shape[1]
    while input_ids.shape[1] - start < max_new_tokens:
        n_cand = min(k, max_new_tokens - (input_ids.shape[1] - start))
        candidate_ids = input_ids
        for _ in range(n_cand):
            nxt = draft(candidate_ids)[:, -1].argmax(-1, keepdim=True)  # (1, 1)
            candidate_ids = torch.cat([candidate_ids, nxt], dim=-1)
        candidates = candidate_ids[:, input_ids.shape[1]:]  # (1, n_cand)
        logits = target(candidate_ids)[:, input_ids.shape[1] - 1:]  # (1, n_cand + 1, V)
        selected = logits.argmax(-1)  # (1, n_cand + 1)
        n_matches = int(((~(candidates == selected[:, :-1])).cumsum(dim=-1) < 1).sum())
        valid = selected[:, : n_matches + 1]
        input_ids = torch.cat([input_ids, valid], dim=-1)
        new = input_ids[0, start:].tolist()
        if eos_id is not None and eos_id in valid[0].tolist():
            return new[: new.index(eos_id) + 1][:max_new_tokens]
    return input_ids[0, start:start + max_new_tokens].tolist()
