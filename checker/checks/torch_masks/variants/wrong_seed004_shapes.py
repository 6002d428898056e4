# expect: like the PyTorch notebook tutorial's make_src_mask
"""Seed 004's make_src_mask / make_tgt_mask: (B, 1, T) and (B, T, T), its attention adds the head axis later."""
import torch


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id).unsqueeze(-2)  # [batch, 1, src_len]


def make_subsequent_mask(T, device=None):
    return ~torch.triu(torch.ones((1, T, T), device=device), diagonal=1).bool()  # (1, T, T)


def make_decoder_mask(tgt, pad_id=0):
    return make_pad_mask(tgt, pad_id) & make_subsequent_mask(tgt.size(1), tgt.device)  # (B, T, T)


def make_cross_mask(src, tgt, pad_id=0):
    return make_pad_mask(src, pad_id).expand(-1, tgt.size(1), -1)  # (B, T_t, T_s)
