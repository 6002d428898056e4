"""Element by element with Python loops into preallocated bool tensors: slow but correct."""
import torch


def make_pad_mask(tokens, pad_id=0):
    B, T = tokens.shape
    mask = torch.zeros(B, 1, 1, T, dtype=torch.bool, device=tokens.device)
    for b in range(B):
        for j in range(T):
            mask[b, 0, 0, j] = bool(tokens[b, j] != pad_id)
    return mask


def make_subsequent_mask(T, device=None):
    mask = torch.zeros(1, 1, T, T, dtype=torch.bool, device=device)
    for i in range(T):
        mask[0, 0, i, : i + 1] = True
    return mask


def make_decoder_mask(tgt, pad_id=0):
    B, T = tgt.shape
    mask = torch.zeros(B, 1, T, T, dtype=torch.bool, device=tgt.device)
    for b in range(B):
        for i in range(T):
            for j in range(i + 1):
                mask[b, 0, i, j] = bool(tgt[b, j] != pad_id)
    return mask


def make_cross_mask(src, tgt, pad_id=0):
    B, T_s = src.shape
    T_t = tgt.shape[1]
    mask = torch.zeros(B, 1, T_t, T_s, dtype=torch.bool, device=src.device)
    for b in range(B):
        mask[b, 0, :, :] = (src[b] != pad_id)
    return mask
