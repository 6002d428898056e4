"""Index comparisons instead of tril, seed 004's ~triu(diagonal=1), .ne(), and .repeat() for the cross mask."""
import torch


def make_pad_mask(tokens, pad_id=0):
    return tokens.ne(pad_id)[:, None, None]


def make_subsequent_mask(T, device=None):
    i = torch.arange(T, device=device)
    return (i[None, :] <= i[:, None]).view(1, 1, T, T)  # key j visible from query i when j <= i


def make_decoder_mask(tgt, pad_id=0):
    T = tgt.size(1)
    future = torch.triu(torch.ones(T, T, device=tgt.device), diagonal=1).bool()
    return tgt.ne(pad_id)[:, None, None, :] & ~future


def make_cross_mask(src, tgt, pad_id=0):
    return make_pad_mask(src, pad_id).repeat(1, 1, tgt.size(1), 1)
