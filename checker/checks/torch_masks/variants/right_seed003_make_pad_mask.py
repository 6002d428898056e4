# followup: your decoder mask also hides the rows of PAD queries
"""Seed 003's make_pad_mask(T_q, T_k, q_pad, k_pad) (visible = real query AND real key) and
make_subsequent_mask, adapted to the kata's four functions (pad flags from pad_id)."""
import torch


def _seed003_pad_mask(q_pad, k_pad):
    q_visible = (q_pad == 0).unsqueeze(2)  # (B,T_q,1)
    k_visible = (k_pad == 0).unsqueeze(1)  # (B,1,T_k)
    mask = q_visible & k_visible            # (B,T_q,T_k)
    return mask.unsqueeze(1)                # (B,1,T_q,T_k)


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id)[:, None, None, :]  # (B, 1, 1, T)


def make_subsequent_mask(T, device=None):
    return torch.tril(torch.ones(T, T, dtype=torch.bool, device=device)).unsqueeze(0).unsqueeze(0)


def make_decoder_mask(tgt, pad_id=0):
    tgt_pad = (tgt == pad_id).long()
    return _seed003_pad_mask(tgt_pad, tgt_pad) & make_subsequent_mask(tgt.size(1), tgt.device)


def make_cross_mask(src, tgt, pad_id=0):
    return _seed003_pad_mask((tgt == pad_id).long(), (src == pad_id).long())
