"""Causal self-attention with a KV cache: incremental decoding, one token (or a chunk) at a time.

Shape legend:
    B        batch size
    T_past   positions already processed, whose keys and values are cached (0 at the start)
    T_new    new positions processed by this call (the prompt at prefill, 1 per decoding step)
    D        d_model
    H        num_heads
    d_k      D // H

Implement CachedSelfAttention. When a decoder generates token by token, the keys and values of
the past positions never change: compute them once, keep them (the KV cache), and at each step
project only the new positions, append their K and V to the cache, and let the new queries
attend over cache + new keys. The result must equal a full causal self-attention over the
whole sequence at the new positions, while doing O(T_new · (T_past + T_new)) work per call.

__init__(d_model, num_heads) must create these submodules; the checker loads its weights into
them by name: W_q, W_k, W_v, W_o, each nn.Linear(d_model, d_model) with bias.
You may assume num_heads divides d_model.

forward(x, k_cache=None, v_cache=None) arguments:
    x        (B, T_new, D) float tensor: the new positions only (absolute positions
             T_past .. T_past + T_new - 1)
    k_cache  None (nothing cached yet) or (B, H, T_past, d_k): the keys of positions 0..T_past-1,
             already split into heads (the k_cache a previous call returned); T_past may be 0
    v_cache  None or (B, H, T_past, d_k): the values, likewise
Returns (out, k_cache, v_cache):
    out      (B, T_new, D), same dtype as x
    k_cache  (B, H, T_past + T_new, d_k): the cached keys followed by the new positions' keys
             (appended on the time axis, axis 2)
    v_cache  (B, H, T_past + T_new, d_k): the values, likewise

Causal: the new position at absolute index T_past + i attends to every cached key and to the
new keys up to and including itself (new keys 0..i); never to a later new position.
Do not modify the caches passed in (no in-place writes into them): return new tensors.

Rules: work in the dtype and on the device of the inputs (a mask you build must be on
x.device); do not modify the inputs.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention,
torch.nn.functional.multi_head_attention_forward.
"""

import math

import torch
from torch import Tensor, nn


class CachedSelfAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int):
        super().__init__()
        raise NotImplementedError("create self.W_q, self.W_k, self.W_v, self.W_o (nn.Linear(d_model, d_model))")

    def forward(self, x: Tensor, k_cache: Tensor | None = None,
                v_cache: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        raise NotImplementedError("write CachedSelfAttention.forward: project the new positions, append K and V "
                                  "to the caches, attend causally with the offset T_past, return (out, K, V)")
