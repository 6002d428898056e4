# expect: goes on after eos_id
import torch


def _argmax_last(model, ids):
    return model(torch.tensor([ids], dtype=torch.int64))[0, -1].argmax().item()


def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    tokens = prompt[:]
    generated = 0
    while True:
        g = min(k, max_new_tokens - generated)
        proposal = []
        for _ in range(g):
            proposal.append(_argmax_last(draft, tokens + proposal))
        with torch.no_grad():
            verify = target(torch.tensor([tokens + proposal]))[0, len(tokens) - 1:].argmax(-1).tolist()
        i = 0
        while i < g and proposal[i] == verify[i]:
            i += 1
        new = proposal[:i] + [verify[i]]
        tokens += new
        generated += len(new)
        if new[-1] == eos_id or generated >= max_new_tokens:
            return tokens[len(prompt):][:max_new_tokens]
