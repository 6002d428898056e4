# expect: calls the target once per draft token
"""Verifies each draft with its own target call."""
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
        target_choice = []
        accepted = 0
        for i in range(gamma + 1):
            target_choice.append(target(torch.tensor([seq + proposal[:i]]))[0, -1].argmax().item())
            if i == gamma or proposal[i] != target_choice[i]:
                break
            accepted += 1
        new_tokens = proposal[:accepted] + [target_choice[accepted]]
        for tok in new_tokens:
            generated.append(tok)
            seq.append(tok)
            if tok == eos_id or len(generated) == max_new_tokens:
                return generated
    return generated
