# expect: stops before eos_id
import torch


def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    seq = list(prompt)
    out = []
    with torch.no_grad():
        while len(out) < max_new_tokens:
            gamma = min(k, max_new_tokens - len(out))
            guesses = []
            for _ in range(gamma):
                x = torch.tensor([seq + guesses])
                guesses.append(int(draft(x)[0, -1].argmax()))
            logits = target(torch.tensor([seq + guesses]))[0]
            n = len(seq)
            accepted = []
            for j, g in enumerate(guesses):
                want = int(logits[n - 1 + j].argmax())
                if want != g:
                    accepted.append(want)
                    break
                accepted.append(g)
            else:
                accepted.append(int(logits[n - 1 + len(guesses)].argmax()))
            for tok in accepted:
                if tok == eos_id:
                    return out
                out.append(tok)
                seq.append(tok)
                if len(out) == max_new_tokens:
                    return out
    return out
