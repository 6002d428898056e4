"""Dive into Deep Learning's dropout_layer (chapter "Dropout"), with the kata's training flag, the caller's
generator, and x's dtype and device for the mask."""
import torch


def dropout(X, dropout=0.5, training=True, generator=None):
    if not 0 <= dropout <= 1:
        raise ValueError("dropout must be in [0, 1]")
    if not training:
        return X
    # In this case, all elements are dropped out
    if dropout == 1:
        return torch.zeros_like(X)
    # In this case, all elements are kept
    if dropout == 0:
        return X
    mask = (torch.rand(X.shape, generator=generator, device=X.device) > dropout).to(X.dtype)
    return mask * X / (1.0 - dropout)
