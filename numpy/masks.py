"""Padding and look-ahead (causal) masks (NumPy).

Shape legend:
    B    batch size
    T    sequence length
    H    number of heads, T_q / T_k query / key lengths (of the scores a mask is applied to)

Mask convention (the whole catalogue): a bool array, True = this query may attend to this key,
False = hidden. Masks are built to broadcast against attention scores (B, H, T_q, T_k).

Implement
    make_pad_mask(tokens, pad_id=0)
        tokens  (B, T) integer array of token ids; PAD tokens (id == pad_id) may sit anywhere
        pad_id  int, the id of the PAD token (not always 0)
        returns (B, 1, 1, T) bool: True where tokens[b, t] is a real token, False at PAD.
                The two size-1 axes broadcast over the heads and the queries.
    make_causal_mask(T)
        T       int, the sequence length
        returns (T, T) bool: entry [i, j] is True when j <= i, i.e. query i sees keys 0..i
                (itself included) and nothing after it: the lower triangle, diagonal included.

Rules: return bool arrays (not 0/1 floats); do not modify tokens.
Off limits: torch (do not import it).
"""

import numpy as np


def make_pad_mask(tokens: np.ndarray, pad_id: int = 0) -> np.ndarray:
    raise NotImplementedError("write the body of make_pad_mask")


def make_causal_mask(T: int) -> np.ndarray:
    raise NotImplementedError("write the body of make_causal_mask")
