# followup: as the interview tutorial's make_pad_mask does
"""Seed 003's make_pad_mask(T_t, T_s, tgt_pad, src_pad): also hides the rows of PAD target queries."""
import torch


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id).unsqueeze(1).unsqueeze(2)  # (B, 1, 1, T)


def make_subsequent_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device)).unsqueeze(0).unsqueeze(0)  # (1, 1, T, T)


def make_decoder_mask(tgt, pad_id=0):
    return make_pad_mask(tgt, pad_id) & make_subsequent_mask(tgt.size(1), tgt.device)  # (B, 1, T_t, T_t)


def make_cross_mask(src, tgt, pad_id=0):
    B, T_t = tgt.shape
    return make_pad_mask(src, pad_id) & (tgt != pad_id)[:, None, :, None]  # (B, 1, T_t, T_s)
