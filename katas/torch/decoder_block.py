"""A decoder-only Transformer block: the Decoder Block tutorial's SimpleDecoder.

Shape legend:
    B    batch size
    T    sequence length
    D    hidden_dim, the model width
    H    nums_head
    d_k  D // H, the size of one head (the Decoder Block tutorial calls it head_dim)

Implement SimpleDecoder, a post-norm block of a GPT-style decoder:

    H   = layernorm_att(X + o_proj(MaskedMultiHeadSelfAttention(X)))
    out = layernorm_ffn(H + down_proj(act_fn(up_proj(H))))

__init__(hidden_dim, nums_head, dropout=0.0) must create these submodules; the checker loads its
weights into them by name, so spell them exactly (they are the Decoder Block tutorial's names):
    q_proj, k_proj, v_proj, o_proj   each nn.Linear(hidden_dim, hidden_dim) with bias
    layernorm_att                    nn.LayerNorm(hidden_dim, eps=1e-5)
    up_proj                          nn.Linear(hidden_dim, 4 * hidden_dim)
    down_proj                        nn.Linear(4 * hidden_dim, hidden_dim)
    act_fn                           nn.ReLU()
    layernorm_ffn                    nn.LayerNorm(hidden_dim, eps=1e-5)
    drop_att, drop_ffn               nn.Dropout(dropout): on the attention weights and on the FFN
                                     output (the checker uses 0.0)

forward(X, pad_mask=None) arguments:
    X         (B, T, D) float tensor
    pad_mask  None (no padding), or a bool tensor (B, T): True = real token, False = PAD.
Returns:
    output    (B, T, D), same dtype as X

Masking: the block ALWAYS hides the future (query i sees keys 0..i, diagonal included) and, when
pad_mask is given, also hides the PAD keys: visible = causal AND key is real, a bool mask
broadcastable to (B, H, T, T), True = this query may attend to this key (the catalogue's
convention). A query with no visible key (a PAD at position 0) gets all-zero attention weights,
so its attention output is o_proj's bias.

The helpers attention_block and ffn_block follow the Decoder Block tutorial; the checker only calls __init__ and
forward, so organise the code as you like.
Rules: work in the dtype and on the device of the input; do not modify the inputs.
Off limits: torch.nn.TransformerDecoderLayer, torch.nn.MultiheadAttention,
torch.nn.functional.scaled_dot_product_attention.
"""

import math

import torch
from torch import Tensor, nn


class SimpleDecoder(nn.Module):
    def __init__(self, hidden_dim: int, nums_head: int, dropout: float = 0.0):
        super().__init__()
        raise NotImplementedError("create q_proj, k_proj, v_proj, o_proj, layernorm_att, up_proj, down_proj, act_fn, "
                                  "layernorm_ffn, drop_att and drop_ffn")

    def attention_block(self, X: Tensor, mask: Tensor) -> Tensor:
        """X (B, T, D), mask broadcastable to (B, H, T, T) -> layernorm_att(X + attention(X)), (B, T, D)"""
        raise NotImplementedError("write attention_block: project, split heads, masked attention, combine, residual, norm")

    def ffn_block(self, X: Tensor) -> Tensor:
        """X (B, T, D) -> layernorm_ffn(X + down_proj(act_fn(up_proj(X)))), (B, T, D)"""
        raise NotImplementedError("write ffn_block: up 4x, ReLU, down, residual, norm")

    def forward(self, X: Tensor, pad_mask: Tensor | None = None) -> Tensor:
        raise NotImplementedError("write SimpleDecoder.forward: build the causal (+ padding) mask, then both blocks")
