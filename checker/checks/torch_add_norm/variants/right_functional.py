"""F.layer_norm with the module's own weights, F.dropout, and one expression per order."""
import torch.nn.functional as F
from torch import nn


class AddNorm(nn.Module):
    def __init__(self, d_model, pre_norm=False, dropout=0.0, eps=1e-5):
        super().__init__()
        self.pre_norm, self.p = pre_norm, dropout
        self.norm = nn.LayerNorm(d_model, eps=eps)

    def _ln(self, x):
        return F.layer_norm(x, self.norm.normalized_shape, self.norm.weight, self.norm.bias, self.norm.eps)

    def forward(self, x, sublayer):
        inner = self._ln(x) if self.pre_norm else x
        y = x + F.dropout(sublayer(inner), self.p, self.training)
        return y if self.pre_norm else self._ln(y)
