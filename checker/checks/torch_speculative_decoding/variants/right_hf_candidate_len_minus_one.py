"""transformers assisted generation: candidate_length = min(k, max_length - cur_len - 1), so the last token comes from a draftless round."""
import torch


@torch.no_grad()
def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    # transformers' _assisted_decoding, greedy, batch of one
    input_ids = torch.tensor([prompt], dtype=torch.long)
    start = input_ids.shape[1]
    max_length = start + max_new_tokens
    while input_ids.shape[1] < max_length:
        cur_len = input_ids.shape[1]
        candidate_length = min(k, max_length - cur_len - 1)
        candidate_input_ids = input_ids
        for _ in range(candidate_length):
            nxt = draft(candidate_input_ids)[:, -1, :].argmax(dim=-1, keepdim=True)
            candidate_input_ids = torch.cat([candidate_input_ids, nxt], dim=-1)
        candidate_length = candidate_input_ids.shape[1] - cur_len
        new_logits = target(candidate_input_ids)
        selected_tokens = new_logits[:, -candidate_length - 1:, :].argmax(dim=-1)
        candidate_new_tokens = candidate_input_ids[:, cur_len:]
        n_matches = ((~(candidate_new_tokens == selected_tokens[:, :-1])).cumsum(dim=-1) < 1).sum()
        valid_tokens = selected_tokens[:, : n_matches + 1]
        input_ids = torch.cat((input_ids, valid_tokens), dim=-1)
        if eos_id is not None and (valid_tokens == eos_id).any():
            new = input_ids[0, start:].tolist()
            return new[: new.index(eos_id) + 1]
    return input_ids[0, start:max_length].tolist()
