"""A small fixed Transformer the checks hand to the user's code (greedy_decode, copy_task), and their drivers.

Importable in the child (checker.checks.child.transformer), so a model instance pickled in the
parent arrives whole. Its classes are copies of solutions/torch/transformer.py (kept equal by
checker/checks/torch_transformer/test_reference.py); below them: a Transformer that records how it is
called, the checker's own greedy decoder, and the crafted models of the checks.
"""

import math

import torch
from torch import Tensor, nn

from checker.checks.child.layers import DecoderLayer, EncoderLayer, FeedForward, MultiHeadAttention  # noqa: F401


class PositionalEncoding(nn.Module):
    """Adds the fixed sin/cos table to x: forward(x) = dropout(x + pe[:, :T])."""

    def __init__(self, d_model: int, max_len: int = 5000, dropout: float = 0.0):
        super().__init__()
        self.dropout = nn.Dropout(dropout)
        # 1) one angle per (position, column pair); float64 keeps the table exact to float32 rounding
        position = torch.arange(max_len, dtype=torch.float64)[:, None]  # (max_len, 1)
        two_i = torch.arange(0, d_model, 2, dtype=torch.float64)  # (ceil(D/2),) even column indices 2i
        angle = position / 10000.0 ** (two_i / d_model)  # (max_len, 1) / (ceil(D/2),) -> (max_len, ceil(D/2))
        # 2) even columns sin, odd columns cos; an odd d_model has one cos column fewer
        pe = torch.zeros(max_len, d_model, dtype=torch.float64)
        pe[:, 0::2] = torch.sin(angle)
        pe[:, 1::2] = torch.cos(angle[:, : d_model // 2])
        # 3) a buffer, not a parameter: saved in state_dict, moved by .to(), never trained
        self.register_buffer("pe", pe.unsqueeze(0).to(torch.get_default_dtype()))  # (1, max_len, D)

    def forward(self, x: Tensor) -> Tensor:
        T = x.size(1)
        return self.dropout(x + self.pe[:, :T])  # (B, T, D) + (1, T, D) -> (B, T, D)


class Transformer(nn.Module):
    """Encoder-decoder Transformer (the interview tutorial): forward(src, tgt) -> logits (B, T_t, V_t)."""

    def __init__(self, src_vocab: int, tgt_vocab: int, d_model: int = 256, num_heads: int = 8, d_ff: int = 512,
                 num_layers: int = 4, dropout: float = 0.1, max_len: int = 512, pad_id: int = 0):
        super().__init__()
        self.pad_id = pad_id
        self.src_embed = nn.Embedding(src_vocab, d_model)
        self.tgt_embed = nn.Embedding(tgt_vocab, d_model)
        self.pos_enc = PositionalEncoding(d_model, max_len, dropout)  # one table, shared by both sides
        self.encoder_layers = nn.ModuleList(EncoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.decoder_layers = nn.ModuleList(DecoderLayer(d_model, num_heads, d_ff, dropout) for _ in range(num_layers))
        self.out_proj = nn.Linear(d_model, tgt_vocab)

    def encode(self, src: Tensor) -> Tensor:
        # 1) mask: every query sees the real (non-PAD) source keys
        src_mask = (src != self.pad_id)[:, None, None, :]  # (B, T_s) -> (B, 1, 1, T_s)
        # 2) embed, add positions, run the layers one after the other
        x = self.pos_enc(self.src_embed(src))  # (B, T_s) -> (B, T_s, D)
        for layer in self.encoder_layers:
            x, _ = layer(x, src_mask)  # (B, T_s, D)
        return x

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor) -> Tensor:
        # 1) masks: target keys that are real and not in the future; real source keys
        T_t = tgt.size(1)
        causal = torch.ones(T_t, T_t, dtype=torch.bool, device=tgt.device).tril()  # (T_t, T_t): key j <= query i
        tgt_mask = (tgt != self.pad_id)[:, None, None, :] & causal  # (B, 1, 1, T_t) & (T_t, T_t) -> (B, 1, T_t, T_t)
        memory_mask = (src != self.pad_id)[:, None, None, :]  # (B, T_s) -> (B, 1, 1, T_s)
        # 2) embed, add positions, run the layers; each cross-attends to the encoder's output
        y = self.pos_enc(self.tgt_embed(tgt))  # (B, T_t) -> (B, T_t, D)
        for layer in self.decoder_layers:
            y, _, _ = layer(y, memory, tgt_mask, memory_mask)  # (B, T_t, D)
        return y

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        memory = self.encode(src)  # (B, T_s, D)
        return self.out_proj(self.decode(tgt, memory, src))  # (B, T_t, D) -> (B, T_t, V_t)


# ---------------------------------------------------------------------------- fixtures


class RecordingTransformer(Transformer):
    """The Transformer above, noting (method, training mode, gradients enabled) at every call."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.calls: list[tuple[str, bool, bool]] = []
        self.made_by = ""  # how the checks built it, shown instead of the long module tree

    def __repr__(self) -> str:
        return self.made_by or super().__repr__()

    def _note(self, method: str) -> None:
        self.calls.append((method, self.training, torch.is_grad_enabled()))

    def encode(self, src: Tensor) -> Tensor:
        self._note("encode")
        return super().encode(src)

    def decode(self, tgt: Tensor, memory: Tensor, src: Tensor) -> Tensor:
        self._note("decode")
        return super().decode(tgt, memory, src)

    def forward(self, src: Tensor, tgt: Tensor) -> Tensor:
        self._note("forward")
        return super().forward(src, tgt)


def seeded_model(seed: int, *, vocab: int, d_model: int, num_heads: int, d_ff: int, num_layers: int,
                 dropout: float = 0.0, pad_id: int = 0, max_len: int = 64, spread: float = 1.0,
                 embed: float = 1.0, bias: dict | None = None, cls=RecordingTransformer) -> Transformer:
    """A model whose every weight comes from a local generator (the global RNG is not touched).

    spread scales the output projection (how peaked the logits are); embed scales the target
    embeddings (small: the positions dominate, so the tokens vary along a sequence); bias adds
    to chosen out_proj.bias entries, e.g. {pad_id: -30.0} so PAD is never predicted.
    """
    g = torch.Generator().manual_seed(seed)
    model = cls(vocab, vocab, d_model=d_model, num_heads=num_heads, d_ff=d_ff, num_layers=num_layers,
                dropout=dropout, max_len=max_len, pad_id=pad_id).double()
    with torch.no_grad():
        for name, p in model.named_parameters():
            noise = torch.randn(p.shape, generator=g, dtype=torch.float64)
            if ".norm" in name:  # LayerNorm: gamma near 1, beta near 0
                p.copy_((1.0 if name.endswith("weight") else 0.0) + 0.1 * noise)
            elif p.dim() == 2 and "embed" not in name:
                p.copy_(noise / math.sqrt(p.shape[1]))
            else:
                p.copy_(noise * (0.1 if p.dim() == 1 else 1.0))
        model.out_proj.weight.mul_(spread)
        model.tgt_embed.weight.mul_(embed)
        for token, value in (bias or {}).items():
            model.out_proj.bias[token] += value
    if isinstance(model, RecordingTransformer):
        model.made_by = (f"a Transformer (d_model={d_model}, num_layers={num_layers}) with seeded random weights: "
                         f"checker.checks.child.transformer.seeded_model({seed}, vocab={vocab}, ...)")
    return model.eval()


@torch.no_grad()
def greedy(model: Transformer, src: Tensor, bos_id: int, eos_id: int, max_new_tokens: int) -> Tensor:
    """The checker's own greedy decoder (same rule as the greedy_decode kata): (B, T_out) ids."""
    model.eval()
    memory = model.encode(src)  # (B, T_s, D)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)  # (B, 1)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens):
        next_id = model.out_proj(model.decode(ys, memory, src)[:, -1]).argmax(-1)  # (B,)
        next_id = next_id.masked_fill(finished, model.pad_id)
        ys = torch.cat([ys, next_id[:, None]], dim=1)
        finished |= next_id == eos_id
        if finished.all():
            break
    return ys


def copy_machine(*, vocab: int = 9, pad_id: int = 0, bos_id: int = 1, dropout: float = 0.0,
                 spread: float = 0.25) -> RecordingTransformer:
    """A Transformer whose weights are set by hand so that greedy decoding copies the source.

    Decoder position i cross-attends to source position i and predicts the token found there,
    so greedy decoding from BOS yields src[0], src[1], ... : a source row holding EOS at index L
    ends at step L + 1, a row without EOS never ends. PAD and BOS are never predicted. spread
    sets the gap between the best and the second-best logit (~5.5 * spread): small enough that
    sampling from the softmax would stray, far above float32 rounding.

    How: d_model = 32, one layer each, one head; every sublayer is zero except the decoder's
    cross-attention. The tokens are one-hot (height 8) in the sin columns of the slow half of
    the positional table (nearly constant over positions; the last is a reference column that
    cancels LayerNorm's mean). Q and K read the three fastest sin/cos pairs, whose dot product
    peaks at equal positions; V and the output projection read the token columns.
    """
    D, A, g, gain = 32, 8.0, 8.0, 3.0
    model = RecordingTransformer(vocab, vocab, d_model=D, num_heads=1, d_ff=4, num_layers=1, dropout=dropout,
                                 max_len=64, pad_id=pad_id).double()
    content = [t for t in range(vocab) if t not in (pad_id, bos_id)]
    sin_cols = list(range(D // 2, D, 2))
    ref, columns = sin_cols[-1], dict(zip(content, sin_cols[:-1]))
    assert len(content) <= len(sin_cols) - 1, "copy_machine holds at most 7 content tokens"
    with torch.no_grad():
        for name, p in model.named_parameters():
            p.fill_(1.0 if ".norm" in name and name.endswith("weight") else 0.0)
        cross = model.decoder_layers[0].cross_attn
        for c in range(6):  # positions: Q and K see the three fastest sin/cos pairs
            for W in (cross.W_q, cross.W_k):
                W.weight[c, c], W.weight[c, ref] = g, -g
        for token, c in columns.items():  # tokens: embedded one-hot, carried by V, read by out_proj
            model.src_embed.weight[token, c] = A
            cross.W_v.weight[c, c], cross.W_v.weight[c, ref] = 1.0, -1.0
            cross.W_o.weight[c, c] = gain
            model.out_proj.weight[token, c], model.out_proj.weight[token, ref] = spread, -spread
        model.out_proj.bias[pad_id] = model.out_proj.bias[bos_id] = -30.0
    model.made_by = (f"a Transformer (d_model={D}, 1 layer, dropout={dropout}) whose weights copy the source: "
                     f"checker.checks.child.transformer.copy_machine(pad_id={pad_id}, bos_id={bos_id}, dropout={dropout})")
    return model.eval()


# ---------------------------------------------------------------------------- optimizers
# The copy-task checks hand train_step real torch.optim optimizers (optimizer.defaults, param_groups, state,
# state_dict and a scheduler on top all work), with two changes that keep a check fast: the methods torch wraps in
# torch._disable_dynamo run unwrapped (the wrapper's first call imports torch._dynamo, 2-5 s, more than the whole
# check), and step() is the plain update of the default settings, written out (torch's own step imports it too).
# They update exactly as torch.optim.SGD / torch.optim.Adam with default settings do
# (checker/checks/torch_copy_task/test_reference.py compares them).


def _eager(cls):
    """cls with Optimizer's dynamo-wrapped methods (add_param_group, zero_grad, state_dict, ...) unwrapped."""
    for name, fn in vars(torch.optim.Optimizer).items():
        inner = getattr(fn, "__wrapped__", None)
        if getattr(getattr(fn, "__code__", None), "co_name", "") == "inner" and inner is not None \
                and name not in vars(cls):  # torch._disable_dynamo's wrapper, whose code is named inner
            setattr(cls, name, inner)
    return cls


@_eager
class SGD(torch.optim.SGD):
    """torch.optim.SGD(params, lr): p -= lr * p.grad."""

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else _closure(closure)
        for group in self.param_groups:
            for p in group["params"]:
                if p.grad is not None:
                    p.add_(p.grad, alpha=-group["lr"])
        return loss


@_eager
class Adam(torch.optim.Adam):
    """torch.optim.Adam(params, lr) with betas (0.9, 0.999), eps 1e-8, no weight decay."""

    @torch.no_grad()
    def step(self, closure=None):
        loss = None if closure is None else _closure(closure)
        for group in self.param_groups:
            beta1, beta2 = group["betas"]
            for p in group["params"]:
                if p.grad is None:
                    continue
                s = self.state[p]
                if not s:  # torch's own names: exp_avg, exp_avg_sq, a float step
                    s.update(step=torch.tensor(0.0), exp_avg=torch.zeros_like(p), exp_avg_sq=torch.zeros_like(p))
                s["step"] += 1
                step = float(s["step"])
                s["exp_avg"].lerp_(p.grad, 1 - beta1)
                s["exp_avg_sq"].mul_(beta2).addcmul_(p.grad, p.grad, value=1 - beta2)
                denom = (s["exp_avg_sq"].sqrt() / math.sqrt(1 - beta2 ** step)).add_(group["eps"])
                p.addcdiv_(s["exp_avg"], denom, value=-group["lr"] / (1 - beta1 ** step))
        return loss


def _closure(closure):
    with torch.enable_grad():
        return closure()


# ============================================================================ drivers (run in the child)


def greedy_decode_calls(user, model, src, bos_id, eos_id, max_new_tokens):
    """The user's greedy_decode on a RecordingTransformer: its ids, and how the model was called.

    calls: [method, model in training mode, gradients enabled] for every encode/decode/forward.
    """
    model.calls.clear()
    ids = user.greedy_decode(model, src, bos_id, eos_id, max_new_tokens)
    return {"ids": ids, "calls": [list(call) for call in model.calls]}


def train_step_once(user, model, batch, pad_id, lr, seed):
    """One call of the user's train_step, with an SGD optimizer built here and stale gradients planted.

    The optimizer has two param groups, as training loops build them: the matrices, and the biases and norms (no
    weight decay). The stale gradients (seeded noise) must be cleared by train_step before its backward pass.
    Returns the loss it returned, every parameter afterwards, and how the model was called.
    """
    params = list(model.parameters())
    optimizer = SGD([{"params": [p for p in params if p.dim() >= 2]},  # torch.optim.SGD's update, no torch._dynamo
                     {"params": [p for p in params if p.dim() < 2], "weight_decay": 0.0}], lr=lr)
    g = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype)
    model.calls.clear()
    loss = user.train_step(model, optimizer, *batch, pad_id)
    return {"loss": loss, "params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "calls": [list(call) for call in model.calls]}


def copy_task_training(user, config):
    """Train a fresh small Transformer with the user's make_copy_batch and train_step; decode held-out rows.

    Returns the loss of every step, the held-out sources and the checker's own greedy decoding of them.
    """
    c = config
    torch.manual_seed(c["seed"])
    model = Transformer(c["vocab"], c["vocab"], d_model=c["d_model"], num_heads=c["num_heads"],
                        d_ff=c["d_ff"], num_layers=c["num_layers"], dropout=0.0, max_len=16, pad_id=0)
    optimizer = Adam(model.parameters(), lr=c["lr"])  # torch.optim.Adam's update
    g = torch.Generator().manual_seed(c["seed"])
    losses = []
    for _ in range(c["steps"]):
        src, tgt_inp, tgt_out = user.make_copy_batch(c["batch"], c["seq_len"], c["vocab"], g)
        losses.append(float(user.train_step(model, optimizer, src, tgt_inp, tgt_out, 0)))
    held = torch.randint(3, c["vocab"], (c["held_out"], c["seq_len"]), generator=torch.Generator().manual_seed(c["seed"] + 1))
    return {"losses": losses, "src": held, "pred": greedy(model, held, 1, 2, c["seq_len"] + 1)}
