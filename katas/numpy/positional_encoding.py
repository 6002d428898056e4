"""Sinusoidal positional encoding (NumPy).

Shape legend:
    T  number of positions (the argument `position`)
    D  d_model, the size of every position's vector

Implement positional_encoding(position, d_model):

    PE[pos, 2i]   = sin(pos / 10000^(2i / d_model))
    PE[pos, 2i+1] = cos(pos / 10000^(2i / d_model))

for pos = 0, 1, ..., position - 1 and every column of d_model: column j uses the
pair index i = j // 2, even columns take sin, odd columns take cos.

Arguments:
    position  int >= 1, the number of positions T
    d_model   int >= 1, the model size D; it may be odd, and then the last column
              (index D - 1, which is even) is a sin column with no cos partner.
Returns:
    a float64 NumPy array of shape (1, T, D): a leading batch axis of size 1, so that it
    broadcasts when added to embeddings of shape (B, T, D).
    float64 is the contract: do not cast to float32 at the end (the NumPy tutorial does).

Rules: NumPy only; the file must not import torch (this kata is the NumPy track).
Build the table with array operations; no Python loop over positions is needed.
"""

import numpy as np


def positional_encoding(position: int, d_model: int) -> np.ndarray:
    raise NotImplementedError("write the body of positional_encoding")
