"""Add & Norm in both orders: post-LN and pre-LN.

Shape legend:
    ...  any leading axes, e.g. (B, T) or just (T,)
    D    d_model

Implement AddNorm, the residual connection + LayerNorm that wraps every sublayer (attention,
FFN) of a Transformer, in the order chosen by pre_norm:

    post-LN (pre_norm=False, the paper and all five tutorials):  out = norm(x + dropout(sublayer(x)))
    pre-LN  (pre_norm=True, GPT-2 and most models since):    out = x + dropout(sublayer(norm(x)))

__init__(d_model, pre_norm=False, dropout=0.0, eps=1e-5) must create, with these names (the
checker loads its weights into them):
    norm     nn.LayerNorm(d_model, eps=eps)
    dropout  nn.Dropout(dropout): on the sublayer's output only (the checker uses 0.0)

forward(x, sublayer) arguments:
    x         (..., D) float tensor
    sublayer  a callable (an nn.Module: the attention, the FFN ...) mapping (..., D) -> (..., D).
              AddNorm calls it itself, once: unlike the interview tutorial's ResidualLayerNorm(x, sublayer_out),
              it does not receive the sublayer's output.
Returns:
    out       (..., D), same dtype as x

Rules: work in the dtype and on the device of the input; do not modify the input.
Off limits: torch.nn.TransformerEncoderLayer, torch.nn.TransformerDecoderLayer.
"""

from typing import Callable

from torch import Tensor, nn


class AddNorm(nn.Module):
    def __init__(self, d_model: int, pre_norm: bool = False, dropout: float = 0.0, eps: float = 1e-5):
        super().__init__()
        raise NotImplementedError("create self.norm (nn.LayerNorm) and self.dropout; remember pre_norm")

    def forward(self, x: Tensor, sublayer: Callable[[Tensor], Tensor]) -> Tensor:
        raise NotImplementedError("write AddNorm.forward: post-LN or pre-LN, as self.pre_norm says")
