# followup: a draft beyond the budget can never be used
"""Always drafts k tokens (as many blog posts do) and cuts the result at max_new_tokens at the end."""
import torch


@torch.no_grad()
def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    tokens = list(prompt)
    start = len(tokens)
    while len(tokens) - start < max_new_tokens:
        proposal = []
        for _ in range(k):
            nxt = draft(torch.tensor([tokens + proposal]))[0, -1].argmax().item()
            proposal.append(nxt)
        verified = target(torch.tensor([tokens + proposal]))[0, len(tokens) - 1:].argmax(-1).tolist()
        accepted = 0
        for a, b in zip(proposal, verified):
            if a != b:
                break
            accepted += 1
        tokens += proposal[:accepted] + [verified[accepted]]
        generated = tokens[start:]
        if eos_id is not None and eos_id in generated:
            return generated[: generated.index(eos_id) + 1][:max_new_tokens]
    return tokens[start:start + max_new_tokens]
