# expect: sublayer is called 2 times
"""pre-LN computes the sublayer once to log its output norm, then again for the residual: two calls, and with dropout two masks."""
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, pre_norm=False, dropout=0.0, eps=1e-5):
        super().__init__()
        self.pre_norm = pre_norm
        self.norm = nn.LayerNorm(d_model, eps=eps)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x, sublayer):
        if self.pre_norm:
            h = sublayer(self.norm(x))
            self.last_norm = float(h.norm())
            return x + self.dropout(sublayer(self.norm(x)))
        return self.norm(x + self.dropout(sublayer(x)))
