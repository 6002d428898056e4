# expect: device=tgt.device
"""make_decoder_mask calls make_subsequent_mask without the target's device."""

import torch
from torch import Tensor


def make_pad_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """tokens (B, T) -> (B, 1, 1, T): True where the key is a real token."""
    return (tokens != pad_id)[:, None, None, :]  # (B, T) -> (B, 1, 1, T)


def make_subsequent_mask(T: int, device=None) -> Tensor:
    """(1, 1, T, T): query i sees keys 0..i (lower triangle with the diagonal)."""
    return torch.ones(T, T, dtype=torch.bool, device=device).tril()[None, None]  # (T, T) -> (1, 1, T, T)


def make_decoder_mask(tgt: Tensor, pad_id: int = 0) -> Tensor:
    """tgt (B, T_t) -> (B, 1, T_t, T_t): a key is visible if it is real AND not in the future."""
    _, T_t = tgt.shape
    # (B, 1, 1, T_t) & (1, 1, T_t, T_t) -> (B, 1, T_t, T_t)
    return make_pad_mask(tgt, pad_id) & make_subsequent_mask(T_t)


def make_cross_mask(src: Tensor, tgt: Tensor, pad_id: int = 0) -> Tensor:
    """src (B, T_s), tgt (B, T_t) -> (B, 1, T_t, T_s): every target query sees the real source keys."""
    _, T_t = tgt.shape
    return make_pad_mask(src, pad_id).repeat(1, 1, T_t, 1)  # (B, 1, 1, T_s) -> (B, 1, T_t, T_s)
