# expect: ONCE
"""A loop over the generated tokens, not over the set of them: a token generated k times is rescaled k times."""
import torch


def apply_penalties(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    out = logits.clone()
    for b in range(logits.shape[0]):
        for token in generated[b].tolist():
            if out[b, token] > 0:
                out[b, token] = out[b, token] / penalty
            else:
                out[b, token] = out[b, token] * penalty
    counts = torch.zeros_like(logits)
    counts.scatter_add_(1, generated, torch.ones(generated.shape, dtype=logits.dtype))
    out = out - frequency_penalty * counts
    out = out - presence_penalty * (counts > 0).to(logits.dtype)
    return out
