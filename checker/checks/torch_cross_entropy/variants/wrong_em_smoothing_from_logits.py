# expect: one variable read where another belongs
"""The smoothing term averages the raw logits, not the log-probabilities (error model)."""
import torch
from torch import Tensor


def cross_entropy(logits: Tensor, target: Tensor, ignore_index: int = -100, label_smoothing: float = 0.0) -> Tensor:
    logprobs = torch.log_softmax(logits, dim=-1)
    valid = target != ignore_index
    picked = logprobs.gather(-1, target.masked_fill(~valid, 0).unsqueeze(-1)).squeeze(-1)
    uniform = logits.mean(dim=-1)
    per_pos = -(1 - label_smoothing) * picked - label_smoothing * uniform
    return (per_pos * valid).sum() / valid.sum()
