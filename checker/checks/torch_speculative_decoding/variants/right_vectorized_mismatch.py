import torch


@torch.no_grad()
def speculative_decode(target, draft, prompt, max_new_tokens, k, eos_id):
    seq = torch.tensor(prompt, dtype=torch.long).unsqueeze(0)        # (1, t)
    n_prompt = seq.shape[1]
    while seq.shape[1] - n_prompt < max_new_tokens:
        left = max_new_tokens - (seq.shape[1] - n_prompt)
        g = min(k, left)
        drafted = seq
        for _ in range(g):
            tok = draft(drafted)[:, -1].argmax(-1, keepdim=True)     # (1, 1)
            drafted = torch.cat([drafted, tok], dim=1)
        preds = target(drafted)[0, seq.shape[1] - 1:].argmax(-1)      # (g + 1,)
        d = drafted[0, seq.shape[1]:]                                  # (g,)
        mismatch = (d != preds[:g]).nonzero()
        n = int(mismatch[0]) if len(mismatch) else g
        new = torch.cat([d[:n], preds[n:n + 1]])[:left]
        seq = torch.cat([seq, new.unsqueeze(0)], dim=1)
        if eos_id is not None and (new == eos_id).any():
            break
    out = seq[0, n_prompt:].tolist()
    if eos_id is not None and eos_id in out:
        out = out[: out.index(eos_id) + 1]
    return out
