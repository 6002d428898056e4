# expect: additive mask
"""The causal mask as the PyTorch tutorial's generate_square_subsequent_mask builds it: 0.0 on and below the
diagonal, -inf above, to be added to the scores."""
import torch


def make_pad_mask(tokens, pad_id=0):
    return (tokens != pad_id).unsqueeze(1).unsqueeze(2)


def make_subsequent_mask(T, device=None):
    return torch.triu(torch.full((T, T), float("-inf"), device=device), diagonal=1)[None, None]


def make_decoder_mask(tgt, pad_id=0):
    return make_pad_mask(tgt, pad_id) & (make_subsequent_mask(tgt.size(1), device=tgt.device) == 0)


def make_cross_mask(src, tgt, pad_id=0):
    return make_pad_mask(src, pad_id).expand(-1, -1, tgt.size(1), -1)
