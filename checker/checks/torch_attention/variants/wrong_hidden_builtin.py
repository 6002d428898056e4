# expect: called torch.nn.functional.scaled_dot_product_attention
from torch import nn
import torch.nn.functional as F
sdpa = getattr(F, "scaled_dot_" + "product_attention")


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        import math
        s = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = s.softmax(-1)
        if mask is not None:
            w = w.masked_fill(~mask, 0.0)
        return sdpa(Q, K, V, attn_mask=mask), w
