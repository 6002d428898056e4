"""Padding, causal, decoder and cross-attention masks.

Shape legend:
    B    batch size
    T    sequence length (make_pad_mask, make_subsequent_mask)
    T_s  source length (the encoder's tokens)
    T_t  target length (the decoder's tokens)

Mask convention (the whole catalogue): a bool tensor broadcastable to (B, H, T_q, T_k);
True = this query may attend to this key, False = hidden. The axis of size 1 at position 1
is the head axis H; the last axis is always the KEYS. A query with no visible key gets
all-zero attention weights.

Token tensors are integer ids of shape (B, T); padding sits at the end of each sequence
(`[5, 8, 2, PAD, PAD]`) and sequences of a batch have different lengths. pad_id is the id
of the PAD token (not always 0).

Write four functions. Every result is a torch.bool tensor on the device of the input tokens
(make_subsequent_mask: on `device`):

    make_pad_mask(tokens, pad_id=0)       tokens (B, T)      -> (B, 1, 1, T)
        True where tokens != pad_id: a KEY mask (every query may look at every real token).
    make_subsequent_mask(T, device=None)  T an int            -> (1, 1, T, T)
        The lower triangle including the diagonal: query i sees keys 0..i.
    make_decoder_mask(tgt, pad_id=0)      tgt (B, T_t)       -> (B, 1, T_t, T_t)
        Decoder self-attention: the padding mask of tgt AND the subsequent mask.
    make_cross_mask(src, tgt, pad_id=0)   src (B, T_s), tgt (B, T_t) -> (B, 1, T_t, T_s)
        Decoder-to-encoder attention: True where the SOURCE key is not PAD, the same row
        for every target query, materialized to the full (B, 1, T_t, T_s) shape (expand is
        fine). Target padding is NOT masked here.

Rules: do not modify the input tensors.
"""

import torch
from torch import Tensor


def make_pad_mask(tokens: Tensor, pad_id: int = 0) -> Tensor:
    """tokens (B, T) int -> (B, 1, 1, T) bool, True where tokens != pad_id."""
    raise NotImplementedError("write make_pad_mask")


def make_subsequent_mask(T: int, device=None) -> Tensor:
    """(1, 1, T, T) bool on device, True on and below the diagonal: query i sees keys 0..i."""
    raise NotImplementedError("write make_subsequent_mask")


def make_decoder_mask(tgt: Tensor, pad_id: int = 0) -> Tensor:
    """tgt (B, T_t) int -> (B, 1, T_t, T_t) bool: key padding AND no look-ahead."""
    raise NotImplementedError("write make_decoder_mask")


def make_cross_mask(src: Tensor, tgt: Tensor, pad_id: int = 0) -> Tensor:
    """src (B, T_s), tgt (B, T_t) int -> (B, 1, T_t, T_s) bool: True where the source key is not PAD."""
    raise NotImplementedError("write make_cross_mask")
