# expect: never append the target's correction
"""Appends the accepted drafts only."""
import torch


@torch.no_grad()
def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    seq = list(prompt)
    generated = []
    while len(generated) < max_new_tokens:
        gamma = min(k, max_new_tokens - len(generated))
        proposal = []
        for _ in range(gamma):
            logits = draft(torch.tensor([seq + proposal]))
            proposal.append(logits[0, -1].argmax().item())
        logits = target(torch.tensor([seq + proposal]))
        target_choice = logits[0, len(seq) - 1:].argmax(-1).tolist()
        accepted = 0
        for i in range(gamma):
            if proposal[i] != target_choice[i]:
                break
            accepted += 1
        new_tokens = proposal[:accepted]
        for tok in new_tokens:
            generated.append(tok)
            seq.append(tok)
            if tok == eos_id or len(generated) == max_new_tokens:
                return generated
    return generated
