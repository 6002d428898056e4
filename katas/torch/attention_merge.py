"""Flash-decoding's split-KV attention: attention over chunks of keys, merged exactly, from scratch.

Shape legend:
    B    batch size
    H    number of heads
    T_q  query length (1 when decoding one token)
    T_c  keys (and values) in one chunk; T_c = 0 is an empty chunk
    d_k  query/key size per head
    d_v  value size per head
    n    number of chunks merged (n >= 1)

Flash-decoding (Dao et al. 2023) splits a long KV cache into chunks, attends over each chunk in
parallel, and merges the partial results. Each chunk keeps the log-sum-exp (lse) of its scores, which
is all a merge needs: vLLM's merge_attn_states and flash-attention's split-KV combine use this rule.

1. attend_chunk(q, k, v, mask=None) -> (out, lse): attention over this chunk's keys only.

       s    = q kᵀ / √d_k, with s = -inf where mask is False
       lse  = log Σ_j exp(s_j)                          natural log, over the chunk's keys
       out  = Σ_j exp(s_j - lse) v_j                    normalised within the chunk

   A row that sees no key of the chunk (every key masked, or T_c = 0): lse = -inf and out = 0,
   never NaN.

2. merge(outputs, lses) -> (out, lse): the n chunks combined, equal to attend_chunk over all their
   keys at once (up to rounding):

       lse  = log Σ_i exp(lse_i)
       out  = Σ_i exp(lse_i - lse) · out_i

   Compute it stably (subtract the largest lse_i first: lse_i may be in the hundreds). A chunk with
   lse_i = -inf has weight 0 and is ignored, whatever its output holds (finite values). A row whose lse
   is -inf in EVERY chunk (it sees no key at all) gets out = 0 and lse = -inf, as a fully masked row in
   this catalogue does.

Arguments of attend_chunk:
    q     (B, H, T_q, d_k) float
    k     (B, H, T_c, d_k) float, same dtype
    v     (B, H, T_c, d_v) float, same dtype
    mask  None (every key visible) or bool, broadcastable to (B, H, T_q, T_c); True = this query may
          attend to this key (the catalogue's convention)
returns out (B, H, T_q, d_v) and lse (B, H, T_q), both of q's dtype, differentiable.

Arguments of merge:
    outputs  list of n tensors (B, H, T_q, d_v), the chunks' outputs
    lses     list of n tensors (B, H, T_q), their log-sum-exps (natural log), same dtype
returns out (B, H, T_q, d_v) and lse (B, H, T_q), of the inputs' dtype.
raise ValueError when outputs is empty or len(outputs) != len(lses).

Rules: do not modify the inputs.
Off limits: vllm, flash_attn, flashinfer, torch.nn.functional.scaled_dot_product_attention.
"""

import torch
from torch import Tensor


def attend_chunk(q: Tensor, k: Tensor, v: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write attend_chunk: scores, masked, lse over the chunk, normalised output")


def merge(outputs: list[Tensor], lses: list[Tensor]) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write merge: weigh each chunk by exp(lse_i - lse), stably")
