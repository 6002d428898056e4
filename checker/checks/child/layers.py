"""Given layers the checks hand to the user's code (stacks) or build their mistakes from (decoder_layer).

Importable in the child (checker.checks.child.layers), so a layer instance pickled in the parent
arrives whole. The classes are copies of the given code in katas/torch/stacks.py (kept equal by
checker/checks/torch_stacks/test_reference.py). Below them: the drivers that run these layers, or the
user's own, in the child (see Kit.drive).
"""

import math

import torch
from torch import Tensor, nn

from checker.sandbox.modules import load_state


class MultiHeadAttention(nn.Module):
    """Concat(head_1..head_H) W_o with head_h = softmax(Q_h K_hᵀ / √d_k) V_h; returns (out, attn)."""

    def __init__(self, d_model: int, num_heads: int, dropout: float = 0.0):
        super().__init__()
        assert d_model % num_heads == 0, "num_heads must divide d_model"
        self.d_model, self.num_heads, self.d_k = d_model, num_heads, d_model // num_heads
        self.W_q = nn.Linear(d_model, d_model)
        self.W_k = nn.Linear(d_model, d_model)
        self.W_v = nn.Linear(d_model, d_model)
        self.W_o = nn.Linear(d_model, d_model)
        self.dropout = nn.Dropout(dropout)

    def _split_heads(self, x: Tensor) -> Tensor:
        B, T, _ = x.shape
        return x.view(B, T, self.num_heads, self.d_k).transpose(1, 2)  # (B, T, D) -> (B, T, H, d_k) -> (B, H, T, d_k)

    def _combine_heads(self, x: Tensor) -> Tensor:
        B, H, T, d_k = x.shape
        return x.transpose(1, 2).reshape(B, T, H * d_k)  # (B, H, T, d_k) -> (B, T, H, d_k) -> (B, T, D)

    def _attention(self, Q: Tensor, K: Tensor, V: Tensor, mask: Tensor | None) -> tuple[Tensor, Tensor]:
        scores = Q @ K.transpose(-2, -1) / math.sqrt(self.d_k)  # (B, H, T_q, d_k) x (B, H, d_k, T_k) -> (B, H, T_q, T_k)
        if mask is not None:
            scores = scores.masked_fill(~mask, float("-inf"))  # hidden keys: -inf, so weight 0
        weights = scores.softmax(dim=-1)  # over the keys
        if mask is not None:
            weights = weights.masked_fill(~mask, 0.0)  # a row with no visible key: NaN -> 0
        return self.dropout(weights) @ V, weights  # (B, H, T_q, T_k) x (B, H, T_k, d_k) -> (B, H, T_q, d_k)

    def forward(self, x_q: Tensor, x_kv: Tensor, mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        # 1) project: queries from x_q, keys and values from x_kv; then split into heads
        Q = self._split_heads(self.W_q(x_q))  # (B, T_q, D) -> (B, H, T_q, d_k)
        K = self._split_heads(self.W_k(x_kv))  # (B, T_k, D) -> (B, H, T_k, d_k)
        V = self._split_heads(self.W_v(x_kv))  # (B, T_k, D) -> (B, H, T_k, d_k)
        # 2) attend in every head at once
        out, attn = self._attention(Q, K, V, mask)  # (B, H, T_q, d_k), (B, H, T_q, T_k)
        # 3) concatenate the heads and project back to d_model
        out = self.W_o(self._combine_heads(out))  # (B, H, T_q, d_k) -> (B, T_q, D)
        return out, attn


ACTIVATIONS = {"relu": nn.ReLU, "gelu": nn.GELU}  # nn.GELU() is the exact erf form


class FeedForward(nn.Module):
    """Expands each position to d_ff, applies the activation, projects back to d_model."""

    def __init__(self, d_model: int, d_ff: int, dropout: float = 0.0, activation: str = "relu"):
        super().__init__()
        if activation not in ACTIVATIONS:
            raise ValueError(f"activation must be 'relu' or 'gelu', got {activation!r}")
        self.fc1 = nn.Linear(d_model, d_ff)  # weight (d_ff, D)
        self.fc2 = nn.Linear(d_ff, d_model)  # weight (D, d_ff)
        self.act = ACTIVATIONS[activation]()
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor) -> Tensor:
        hidden = self.act(self.fc1(x))  # (..., D) @ (D, d_ff) -> (..., d_ff)
        return self.fc2(self.dropout(hidden))


class EncoderLayer(nn.Module):
    """The interview tutorial's encoder layer (post-LN): x = norm1(x + SelfAttn(x)); x = norm2(x + FFN(x)); returns (x, attn)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, x: Tensor, src_mask: Tensor | None = None) -> tuple[Tensor, Tensor]:
        # 1) self-attention: queries, keys and values all come from x
        sa_out, attn = self.self_attn(x, x, src_mask)  # (B, T, D), (B, H, T, T)
        # 2) residual + LayerNorm (post-LN: normalize the sum)
        x = self.norm1(x + self.dropout(sa_out))  # (B, T, D)
        # 3) position-wise FFN on the normalized x, residual from that same x, LayerNorm
        x = self.norm2(x + self.dropout(self.ffn(x)))  # (B, T, D) -> (B, T, d_ff) -> (B, T, D)
        return x, attn


class DecoderLayer(nn.Module):
    """Post-LN decoder layer (the interview tutorial): returns (y, self-attention weights, cross-attention weights)."""

    def __init__(self, d_model: int, num_heads: int, d_ff: int, dropout: float = 0.0):
        super().__init__()
        self.self_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.cross_attn = MultiHeadAttention(d_model, num_heads, dropout)
        self.ffn = FeedForward(d_model, d_ff, dropout)
        self.norm1 = nn.LayerNorm(d_model)
        self.norm2 = nn.LayerNorm(d_model)
        self.norm3 = nn.LayerNorm(d_model)
        self.dropout = nn.Dropout(dropout)

    def forward(self, y: Tensor, memory: Tensor, tgt_mask: Tensor | None = None,
                memory_mask: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
        # 1) masked self-attention: Q = K = V = y, position i sees only the target keys tgt_mask allows
        sa_out, self_weights = self.self_attn(y, y, tgt_mask)  # (B, T_t, D), (B, H, T_t, T_t)
        y = self.norm1(y + self.dropout(sa_out))  # residual from the sublayer's input, then LN
        # 2) cross-attention: Q from the decoder, K and V from the encoder memory
        ca_out, cross_weights = self.cross_attn(y, memory, memory_mask)  # (B, T_t, D), (B, H, T_t, T_s)
        y = self.norm2(y + self.dropout(ca_out))
        # 3) position-wise feed-forward network
        y = self.norm3(y + self.dropout(self.ffn(y)))  # (B, T_t, D)
        return y, self_weights, cross_weights


# ============================================================================ drivers (run in the child)


def train_with_only(user, target: str, init: dict, state: dict, args: tuple, active: list[str]):
    """The user's module in training mode with only the dropouts named in `active` left on.

    Every other nn.Dropout gets p = 0, so the result shows whether the active ones act.
    """
    module = getattr(user, target)(**init).double()
    load_state(module, state)
    for name, sub in module.named_modules():
        if isinstance(sub, nn.Dropout) and name not in active:
            sub.p = 0.0
    module.train()
    torch.manual_seed(0)
    return module(*args)


# The dropouts inside the GIVEN building blocks of an encoder layer (not the layer's own).
GIVEN_DROPOUTS = ("self_attn.dropout", "ffn.dropout")


def train_without_given_dropouts(user, target, init, state, x, mask):
    """The user's layer in training mode with the dropouts of the given blocks silenced.

    The only randomness left is the layer's own dropout on the sublayer outputs, whatever the
    user named it. Returns the first output when the layer returns a tuple.
    """
    module = getattr(user, target)(**init).to(x.dtype)
    load_state(module, state)
    for name in GIVEN_DROPOUTS:
        try:
            sub = module.get_submodule(name)
        except AttributeError:
            continue
        if isinstance(sub, nn.Dropout):
            sub.p = 0.0
    module.train()
    value = module(x, mask)
    return value[0] if isinstance(value, (tuple, list)) else value


def with_own_layers(user, kind: str, layer_init: dict, N: int, state: dict, args: tuple):
    """The user's Encoder/Decoder built around the EncoderLayer/DecoderLayer given in the user's file.

    Runs in training mode from a fixed seed: with the given classes unchanged, the dropout masks
    are drawn in the same order as in the reference, so the results match exactly.
    """
    layer_class = getattr(user, "EncoderLayer" if kind == "Encoder" else "DecoderLayer")
    stack = getattr(user, kind)(layer_class(**layer_init), N).double()
    load_state(stack, state)
    stack.train()
    torch.manual_seed(0)
    with torch.no_grad():
        return stack(*args)


class RecordingDecoderLayer(DecoderLayer):
    """A DecoderLayer that remembers the arguments of every call (in the child), for decoder_calls()."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list = []

    def forward(self, *args, **kwargs):
        self.calls.append((args, kwargs))
        return super().forward(*args, **kwargs)


def decoder_calls(user, layer_init: dict, N: int, state: dict, args: tuple):
    """Run the user's Decoder; return, per call of a layer, [layer index, positional args, keyword args]."""
    stack = user.Decoder(RecordingDecoderLayer(**layer_init), N).double()
    load_state(stack, state)
    stack.eval()
    with torch.no_grad():
        stack(*args)
    return [[i, list(a), dict(kw)] for i, layer in enumerate(stack.layers) for a, kw in layer.calls]
