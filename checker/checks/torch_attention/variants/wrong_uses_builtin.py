# expect: uses torch.nn.functional.scaled_dot_product_attention
import torch.nn.functional as F
from torch import nn


class ScaledDotProductAttention(nn.Module):
    def __init__(self, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)

    def forward(self, Q, K, V, mask=None):
        out = F.scaled_dot_product_attention(Q, K, V, attn_mask=mask)
        import torch, math
        s = Q @ K.transpose(-2, -1) / math.sqrt(Q.size(-1))
        if mask is not None:
            s = s.masked_fill(~mask, float("-inf"))
        w = s.softmax(-1)
        if mask is not None:
            w = w.masked_fill(~mask, 0.0)
        return out, w
