"""Multi-head latent attention (MLA), DeepSeek-V2 (2024): a compressed KV cache with a decoupled RoPE key.

Shape legend:
    B         batch size
    T_past    positions already cached (0 at the start)
    T_new     new positions processed by this call; T = T_past + T_new
    D         d_model
    H         num_heads
    d_latent  size of the compressed KV latent c_kv (the paper's d_c)
    d_nope    per-head query/key size that carries no position (the paper's d_h)
    d_rope    size of the RoPE part of each query head, and of the ONE RoPE key shared by all heads (d_h^R)
    d_v       per-head value size

A KV cache of multi-head attention stores 2 * H * d_k numbers per token. MLA stores d_latent + d_rope:
    c_kv   = W_dkv x                         (B, T, d_latent)  the latent, down-projected
    k_nope = W_uk c_kv   per head            (B, H, T, d_nope) up-projected
    v      = W_uv c_kv   per head            (B, H, T, d_v)    up-projected
    k_rope = RoPE(W_kr x)                    (B, T, d_rope)    ONE key for all heads (RoPE does not
                                                               commute with W_uk, so it lives apart)
    q      = W_q x, per head [q_nope | q_rope], q_rope rotated by RoPE
    key of head h = [k_nope_h | k_rope],  query of head h = [q_nope_h | RoPE(q_rope_h)]
    scores = q . key / sqrt(d_nope + d_rope)  (the whole query head); causal; softmax; @ v
    out    = W_o(heads concatenated)
RoPE is applied to q_rope and to W_kr x only, never to the latent or the nope parts.

RoPE: the half-split layout (HF LLaMA's rotate_half): pair i of a vector of size d_rope is
(x[..., i], x[..., i + d_rope/2]), rotated by the angle p * base ** (-2i / d_rope), p the token's
ABSOLUTE position (T_past + i for new position i): (a, b) -> (a cos - b sin, a sin + b cos).
The angles may be computed in float32 (HF's inv_freq buffer): float64 results are held to float32 accuracy.

__init__(d_model, num_heads, d_latent, d_nope, d_rope, d_v, base=10000.0) must create these
submodules, all nn.Linear(..., bias=False); the checker loads its weights into them by name:
    W_q    d_model -> num_heads * (d_nope + d_rope)   viewed as (H, d_nope + d_rope): [q_nope | q_rope]
    W_dkv  d_model -> d_latent
    W_kr   d_model -> d_rope
    W_uk   d_latent -> num_heads * d_nope              viewed as (H, d_nope)
    W_uv   d_latent -> num_heads * d_v                 viewed as (H, d_v)
    W_o    num_heads * d_v -> d_model

forward(x, c_cache=None, k_rope_cache=None) -> (out, c_kv, k_rope)
    x             (B, T_new, D) float tensor: the new positions only
    c_cache       None (nothing cached) or (B, T_past, d_latent): the latents of positions 0..T_past-1
    k_rope_cache  None or (B, T_past, d_rope): their RoPE keys, already rotated
    out           (B, T_new, D), x's dtype
    c_kv          (B, T, d_latent): c_cache followed by the new latents (the new cache)
    k_rope        (B, T, d_rope): k_rope_cache followed by the new rotated RoPE keys
Causal: new position i (absolute T_past + i) sees every cached position and the new ones up to itself.
Do not modify the caches passed in: return new tensors.

Rules: work in the dtype and on the device of the inputs; do not modify the inputs.
Off limits: torch.nn.functional.scaled_dot_product_attention, torch.nn.MultiheadAttention.
"""

import math

import torch
from torch import Tensor, nn


class MultiHeadLatentAttention(nn.Module):
    def __init__(self, d_model: int, num_heads: int, d_latent: int, d_nope: int, d_rope: int, d_v: int,
                 base: float = 10000.0):
        super().__init__()
        raise NotImplementedError("create W_q, W_dkv, W_kr, W_uk, W_uv, W_o (nn.Linear, bias=False)")

    def forward(self, x: Tensor, c_cache: Tensor | None = None,
                k_rope_cache: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        raise NotImplementedError("write MultiHeadLatentAttention.forward: latent and RoPE key, cache, keys and "
                                  "values per head, causal attention; return (out, c_kv, k_rope)")
