"""Hidden checks: parameter counts, FLOPs and KV-cache bytes (the interview tutorial's 参数量分析 and 复杂度分析).

The answers are whole numbers, so there are no standard checks: the user's seven functions are
evaluated in the child over whole lists of calls (checker/checks/torch_transformer_arithmetic/driver.py),
and compared exactly with
    - the parameters of real torch modules configured to match, counted on the meta device
      (nn.MultiheadAttention, nn.TransformerEncoderLayer, nn.TransformerDecoderLayer, and the interview tutorial's
      Transformer assembled from them, tied and untied);
    - the bytes of real K and V tensors (meta device) for the KV cache;
    - the reference's FLOP formulas (checker/checks/torch_transformer_arithmetic/test_reference.py holds them
      to torch.utils.flop_counter on real modules);
    - the interview tutorial's 4·d², 12·d² and 16·d².
A wrong count is named by the knobbed formulas below (W_o, biases, LayerNorm, the factor 2, ...).
"""

import torch
from torch import nn

from checker.checks.torch_transformer_arithmetic.driver import arithmetic_values
from checker.kit import Fail, Mistake, case, check, describe, expect_structure
from checker.lang import t

TARGET = "mha_params"
# Every size its own value in a case; case 2 has d_ff = 4·d_model (the interview tutorial's 2048 = 4 · 512), case 3 is the
# paper's base model. Vocabularies differ, so a swapped src/tgt vocabulary shows when tied.
CASES = [
    case(1, D=24, H=3, d_ff=40, V_s=11, V_t=13, N=2),
    case(2, D=36, H=4, d_ff=144, V_s=17, V_t=19, N=3),
    case(3, D=512, H=8, d_ff=2048, V_s=37000, V_t=36000, N=6),
]
TIMING = CASES[2]
_BIASES = (True, False)
# (B, T_q, T_k, D, H, d_ff): T_q != T_k so cross-attention's K/V projections cannot pass on T_q rows.
_FLOP_CASES = [(2, 5, 7, 24, 3, 40), (3, 11, 4, 36, 4, 144), (1, 9, 9, 64, 8, 256)]
# LLaMA-13B-wide attention (D = 5120, H = 40) over a batch of 65 sequences of 128k tokens: ~2.5e16 FLOPs,
# beyond 2^53, where a float no longer holds every whole number.
_HUGE_FLOPS = (65, 131072, 131072, 5120, 40)
# (B, T, N, H_kv, d_k): every size its own value; LLaMA-2-7B at 4096 tokens in float16 is 2 GiB per sequence.
_KV_CASES = [(2, 7, 3, 5, 4), (3, 13, 2, 1, 6)]
_LLAMA_KV = (1, 4096, 32, 32, 128, torch.float16, 2 * 1024 ** 3)
_DTYPES = (torch.float32, torch.float16, torch.bfloat16, torch.int8, torch.float64)


def inputs(c, dtype="float64"):
    return c.D, c.H, True  # timing only


# ----------------------------------------------------------------------------- counting real modules


def _numel(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())  # parameters() yields a shared (tied) weight once


class _SeedTransformer(nn.Module):
    """The interview tutorial's Transformer from torch's layers: embeddings, N + N post-LN layers, out_proj."""

    def __init__(self, c, bias, tie):
        super().__init__()
        kw = dict(dim_feedforward=c.d_ff, bias=bias, device="meta")
        self.src_embed = nn.Embedding(c.V_s, c.D, device="meta")
        self.tgt_embed = nn.Embedding(c.V_t, c.D, device="meta")
        self.encoder_layers = nn.ModuleList(nn.TransformerEncoderLayer(c.D, c.H, **kw) for _ in range(c.N))
        self.decoder_layers = nn.ModuleList(nn.TransformerDecoderLayer(c.D, c.H, **kw) for _ in range(c.N))
        self.out_proj = nn.Linear(c.D, c.V_t, bias=bias, device="meta")
        if tie:
            self.out_proj.weight = self.tgt_embed.weight


_COUNTED: dict = {}  # torch's own counts, by (what, case id, bias, tie): built once on the meta device, not per check


def _torch_count(what, c, bias, tie=False) -> int:
    key = (what, c.id, bias, tie)
    if key not in _COUNTED:
        _COUNTED[key] = _build_and_count(what, c, bias, tie)
    return _COUNTED[key]


def _build_and_count(what, c, bias, tie) -> int:
    if what == "mha_params":
        return _numel(nn.MultiheadAttention(c.D, c.H, bias=bias, device="meta"))
    if what == "encoder_layer_params":
        return _numel(nn.TransformerEncoderLayer(c.D, c.H, c.d_ff, bias=bias, device="meta"))
    if what == "decoder_layer_params":
        return _numel(nn.TransformerDecoderLayer(c.D, c.H, c.d_ff, bias=bias, device="meta"))
    return _numel(_SeedTransformer(c, bias, tie))


def _kv_tensor_bytes(B, T, N, H_kv, d_k, dtype) -> int:
    k = torch.empty(B, H_kv, T, d_k, dtype=dtype, device="meta")
    return N * 2 * k.nbytes  # K and V of the same shape, in every layer


# ----------------------------------------------------------------------------- named mistakes (knobbed formulas)


def _lin(d_in, d_out, bias):
    return d_in * d_out + (d_out if bias else 0)


def _mha(D, H, bias=True, *, w_o=True, biases="follow", per_head=False):
    b = {"follow": bias, "never": False, "always": True}[biases]
    n = (4 if w_o else 3) * _lin(D, D, b)
    return H * n if per_head else n


def _ffn(D, d_ff, bias, *, ffn_bias=True, quad=False):
    hidden = 4 * D if quad else d_ff
    return _lin(D, hidden, bias and ffn_bias) + _lin(hidden, D, bias and ffn_bias)


def _ln(D, bias, ln):
    return {"both": D + (D if bias else 0), "none": 0, "gamma": D, "beta": 2 * D,
            "bias_drops_all": 2 * D if bias else 0}[ln]  # the bug: bias=False drops γ as well


def _enc(D, H, d_ff, bias=True, *, ln="both", norms=2, **knobs):
    mha_knobs = {k: v for k, v in knobs.items() if k in ("w_o", "biases")}
    ffn_knobs = {k: v for k, v in knobs.items() if k in ("ffn_bias", "quad")}
    return _mha(D, H, bias, **mha_knobs) + _ffn(D, d_ff, bias, **ffn_knobs) + norms * _ln(D, bias, ln)


def _dec(D, H, d_ff, bias=True, *, ln="both", norms=3, attentions=2, **knobs):
    mha_knobs = {k: v for k, v in knobs.items() if k in ("w_o", "biases")}
    ffn_knobs = {k: v for k, v in knobs.items() if k in ("ffn_bias", "quad")}
    return attentions * _mha(D, H, bias, **mha_knobs) + _ffn(D, d_ff, bias, **ffn_knobs) + norms * _ln(D, bias, ln)


def _model(V_s, V_t, D, H, d_ff, N, bias=True, tie=False, *, tie_mode="weight", out=True, out_bias=True,
           src=True, dec_layers=None, enc_layers=None, final_norms=0):
    emb = (V_s if src else 0) * D + V_t * D + final_norms * _ln(D, bias, "both")  # final_norms=2: nn.Transformer's
    layers = (N if enc_layers is None else enc_layers(N)) * _enc(D, H, d_ff, bias) \
        + (N if dec_layers is None else dec_layers(N)) * _dec(D, H, d_ff, bias)
    head = _lin(D, V_t, bias and out_bias) if out else 0
    if tie and out:
        head -= {"weight": V_t * D, "none": 0, "with_bias": V_t * D + (V_t if bias else 0)}[tie_mode]
    return emb + layers + head


def _attn(B, T_q, T_k, D, H, *, per_mac=2, w_o=True, av=True, kv_rows="T_k", head_width="d_k", projections=True):
    d_k = D // H
    rows_kv = T_k if kv_rows == "T_k" else T_q
    proj = ((2 if w_o else 1) * T_q + 2 * rows_kv) * D * D if projections else 0
    width = d_k if head_width == "d_k" else D
    heads = H * (2 if av else 1) * T_q * T_k * width
    return per_mac * B * (proj + heads)


def _ffn_flops(B, T, D, d_ff, *, per_mac=2, matmuls=2, quad=False):
    return per_mac * matmuls * B * T * D * (4 * D if quad else d_ff)


def _kv(B, T, N, H_kv, d_k, dtype, *, tensors=2, size=None, layers=True, bits=False):
    per = dtype.itemsize if size is None else size
    return tensors * B * H_kv * T * d_k * (N if layers else 1) * per * (8 if bits else 1)


_W_O = ("your count leaves out W_o, the output projection: multi-head attention has FOUR (D, D) projections, "
        "W_q, W_k, W_v and W_o (4·D² weights, the interview tutorial's 4·d_model²)")
_MISTAKES = {
    "mha_params": [
        Mistake("W_o forgotten", lambda D, H, bias=True: _mha(D, H, bias, w_o=False), _W_O),
        Mistake("biases forgotten", lambda D, H, bias=True: _mha(D, H, bias, biases="never"),
                "your count leaves out the biases: with bias=True each of W_q, W_k, W_v, W_o has a bias of D, "
                "so MHA has 4·D² + 4·D parameters"),
        Mistake("biases counted with bias=False", lambda D, H, bias=True: _mha(D, H, bias, biases="always"),
                "your count keeps the biases when bias=False: then every Linear is bias-free, 4·D² in all"),
        Mistake("projections per head", lambda D, H, bias=True: _mha(D, H, bias, per_head=True),
                "your count grows with num_heads: the heads SPLIT the D columns of W_q, W_k, W_v (H · d_k = D), "
                "they do not each get their own (D, D) matrices; the count is the same for any H"),
    ],
    "encoder_layer_params": [
        Mistake("LayerNorm forgotten", lambda D, H, f, bias=True: _enc(D, H, f, bias, ln="none"),
                "your count leaves out the LayerNorms: each has γ (D) and β (D), and the encoder layer has 2 of "
                "them (the interview tutorial: LayerNorm 4·d_model)"),
        Mistake("LayerNorm γ only", lambda D, H, f, bias=True: _enc(D, H, f, bias, ln="gamma"),
                "your LayerNorms have γ only: with bias=True each also has β, 2·D per LayerNorm"),
        Mistake("LayerNorm γ dropped with bias=False",
                lambda D, H, f, bias=True: _enc(D, H, f, bias, ln="bias_drops_all"),
                "your LayerNorms count nothing when bias=False: bias=False drops β only; γ stays, D per LayerNorm "
                "(nn.LayerNorm(D, bias=False) still has its weight)"),
        Mistake("LayerNorm β kept with bias=False", lambda D, H, f, bias=True: _enc(D, H, f, bias, ln="beta"),
                "your LayerNorms keep β when bias=False: the contract (and nn.TransformerEncoderLayer(bias=False)) "
                "drops every additive bias, LayerNorm's β too, leaving γ: D per LayerNorm"),
        Mistake("one LayerNorm", lambda D, H, f, bias=True: _enc(D, H, f, bias, norms=1),
                "your count has one LayerNorm: an encoder layer has two, one after each sublayer (add & norm twice)"),
        Mistake("FFN biases forgotten", lambda D, H, f, bias=True: _enc(D, H, f, bias, ffn_bias=False),
                "your FFN has no biases: fc1 has a bias of d_ff and fc2 one of D"),
        Mistake("FFN as 8·D²", lambda D, H, f, bias=True: _enc(D, H, f, bias, quad=True),
                "your FFN is counted with d_ff = 4·D whatever d_ff is: the interview tutorial's 8·d_model² holds only when "
                "d_ff = 4·d_model; the FFN has 2·D·d_ff weights"),
        Mistake("W_o forgotten", lambda D, H, f, bias=True: _enc(D, H, f, bias, w_o=False), _W_O),
        Mistake("biases forgotten", lambda D, H, f, bias=True: _enc(D, H, f, bias, biases="never", ffn_bias=False,
                                                                   ln="gamma"),
                "your count leaves out every bias: with bias=True the Linear layers have biases and each "
                "LayerNorm has β"),
    ],
    "decoder_layer_params": [
        Mistake("cross-attention forgotten", lambda D, H, f, bias=True: _dec(D, H, f, bias, attentions=1),
                "your decoder layer has one attention: it has two, the masked self-attention and the cross-attention "
                "(its own W_q, W_k, W_v, W_o): 2 · 4·D², the interview tutorial's 16·d_model²"),
        Mistake("cross-attention and its norm forgotten",
                lambda D, H, f, bias=True: _dec(D, H, f, bias, attentions=1, norms=2),
                "your decoder layer is counted like an encoder layer: it adds a cross-attention (4·D² + 4·D) and "
                "a third LayerNorm"),
        Mistake("two LayerNorms", lambda D, H, f, bias=True: _dec(D, H, f, bias, norms=2),
                "your decoder layer has two LayerNorms: it has three, one after each of its three sublayers"),
        Mistake("LayerNorm forgotten", lambda D, H, f, bias=True: _dec(D, H, f, bias, ln="none"),
                "your count leaves out the LayerNorms: the decoder layer has 3, each with γ and β (the interview tutorial: "
                "LayerNorm 6·d_model)"),
        Mistake("LayerNorm γ only", lambda D, H, f, bias=True: _dec(D, H, f, bias, ln="gamma"),
                "your LayerNorms have γ only: with bias=True each also has β, 2·D per LayerNorm"),
        Mistake("LayerNorm γ dropped with bias=False",
                lambda D, H, f, bias=True: _dec(D, H, f, bias, ln="bias_drops_all"),
                "your LayerNorms count nothing when bias=False: bias=False drops β only; γ stays, D per LayerNorm "
                "(nn.LayerNorm(D, bias=False) still has its weight)"),
        Mistake("LayerNorm β kept with bias=False", lambda D, H, f, bias=True: _dec(D, H, f, bias, ln="beta"),
                "your LayerNorms keep β when bias=False: the contract (and nn.TransformerDecoderLayer(bias=False)) "
                "drops every additive bias, LayerNorm's β too, leaving γ: D per LayerNorm"),
        Mistake("FFN as 8·D²", lambda D, H, f, bias=True: _dec(D, H, f, bias, quad=True),
                "your FFN is counted with d_ff = 4·D whatever d_ff is: the interview tutorial's 8·d_model² holds only when "
                "d_ff = 4·d_model; the FFN has 2·D·d_ff weights"),
        Mistake("W_o forgotten", lambda D, H, f, bias=True: _dec(D, H, f, bias, w_o=False), _W_O),
    ],
    "transformer_params": [
        Mistake("tied weight counted twice", lambda *a: _model(*a, tie_mode="none"),
                "your count ignores tie_embeddings: tied, out_proj.weight IS tgt_embed.weight, one (V_t, D) matrix "
                "counted once (subtract V_t·D)"),
        Mistake("tying drops out_proj's bias", lambda *a: _model(*a, tie_mode="with_bias"),
                "your tied count also drops out_proj's bias: only the weight is shared with tgt_embed; the bias "
                "(V_t) stays when bias=True"),
        Mistake("out_proj forgotten", lambda *a: _model(*a, out=False),
                "your count leaves out out_proj, the final nn.Linear(D, V_t) to the vocabulary (its weight V_t·D "
                "and bias V_t; tied, the bias only)"),
        Mistake("out_proj bias forgotten", lambda *a: _model(*a, out_bias=False),
                "your count leaves out out_proj's bias (V_t) when bias=True"),
        Mistake("final LayerNorms counted", lambda *a: _model(*a, final_norms=2),
                "your count adds a final LayerNorm after the encoder and after the decoder, as nn.Transformer has: "
                "the interview tutorial's Transformer has none (its layers are post-LN, each ending in its own LayerNorm)"),
        Mistake("one embedding", lambda *a: _model(*a, src=False),
                "your count has one embedding: the interview tutorial has src_embed (V_s, D) AND tgt_embed (V_t, D)"),
        Mistake("decoder layers counted once", lambda *a: _model(*a, dec_layers=lambda n: 1),
                "your count has num_layers encoder layers but one decoder layer: there are N of each"),
        Mistake("layers counted once", lambda *a: _model(*a, dec_layers=lambda n: 1, enc_layers=lambda n: 1),
                "your count has one encoder and one decoder layer: multiply each by num_layers"),
        Mistake("N layers in all", lambda *a: _model(*a, dec_layers=lambda n: 0),
                "your count has num_layers layers in all (the encoder's): the interview tutorial has N encoder layers AND N "
                "decoder layers"),
    ],
    "attention_flops": [
        Mistake("multiply-add as 1 FLOP", lambda *a: _attn(*a, per_mac=1),
                "your FLOPs are half the right ones: a multiply-add is 2 FLOPs (one multiply, one add), so "
                "(m, k) @ (k, n) costs 2·m·k·n"),
        Mistake("W_o forgotten", lambda *a: _attn(*a, w_o=False),
                "your FLOPs leave out W_o, the output projection of the concatenated heads: 2·B·T_q·D² more"),
        Mistake("A·V forgotten", lambda *a: _attn(*a, av=False),
                "your FLOPs count the scores Q Kᵀ but not the weighted sum A V: both are (T_q × T_k × d_k) "
                "products in every head"),
        Mistake("K, V projected on T_q rows", lambda *a: _attn(*a, kv_rows="T_q"),
                "your K and V projections run over T_q rows: in cross-attention K = x_kv W_k and V = x_kv W_v have "
                "T_k rows (the memory), only Q and the output have T_q"),
        Mistake("heads of width D", lambda *a: _attn(*a, head_width="D"),
                "your scores and weighted sum are H times too many: each head works on d_k = D / H columns, so all "
                "heads together cost 2·T_q·T_k·D per product, not H · 2·T_q·T_k·D"),
        Mistake("projections forgotten", lambda *a: _attn(*a, projections=False),
                "your FLOPs count the scores and the weighted sum only (the interview tutorial's O(B·H·T_q·T_k·d_k)): the "
                "contract adds the four projections W_q, W_k, W_v, W_o, 2·B·(2·T_q + 2·T_k)·D²"),
        Mistake("multiply-add as 1 FLOP, no projections", lambda *a: _attn(*a, per_mac=1, projections=False),
                "your FLOPs count each multiply-add once and only the attention products: a multiply-add is 2 "
                "FLOPs, and the four projections count too"),
    ],
    "ffn_flops": [
        # On the FFN alone, 1 FLOP per multiply-add and fc2 forgotten give the same number: name both.
        Mistake("half the FLOPs", lambda *a: _ffn_flops(*a, per_mac=1),
                "your FLOPs are half the right ones: either a multiply-add counted as 1 FLOP (it is 2, so "
                "(m, k) @ (k, n) costs 2·m·k·n), or only one of the two products counted (fc1, D -> d_ff, and fc2, "
                "d_ff -> D, each cost 2·B·T·D·d_ff)"),
        Mistake("d_ff as 4·D", lambda *a: _ffn_flops(*a, quad=True),
                "your FLOPs assume d_ff = 4·D: use the d_ff given"),
    ],
    "kv_cache_bytes": [
        Mistake("only K cached", lambda *a: _kv(*a, tensors=1),
                "your cache holds one tensor per layer: both K AND V are cached, (B, H_kv, T, d_k) each"),
        Mistake("4 bytes whatever dtype", lambda *a: _kv(*a, size=4),
                "your bytes assume 4 per element whatever the dtype: float16 and bfloat16 take 2, int8 1, float64 "
                "8 (dtype.itemsize)"),
        Mistake("2 bytes whatever dtype", lambda *a: _kv(*a, size=2),
                "your bytes assume 2 per element (float16) whatever the dtype: use dtype.itemsize"),
        Mistake("bits, not bytes", lambda *a: _kv(*a, bits=True),
                "your count is in bits: the contract asks for bytes (dtype.itemsize, not the bit width)"),
        Mistake("one layer", lambda *a: _kv(*a, layers=False),
                "your cache is one layer's: every layer keeps its own K and V, multiply by num_layers"),
        Mistake("only K, 4 bytes", lambda *a: _kv(*a, tensors=1, size=4),
                "your cache holds K only, at 4 bytes per element: cache K AND V, at dtype.itemsize bytes each"),
    ],
}
MISTAKES = tuple(m for ms in _MISTAKES.values() for m in ms)

_PARAMS = {
    "mha_params": ["d_model", "num_heads", "bias"],
    "encoder_layer_params": ["d_model", "num_heads", "d_ff", "bias"],
    "decoder_layer_params": ["d_model", "num_heads", "d_ff", "bias"],
    "transformer_params": ["src_vocab", "tgt_vocab", "d_model", "num_heads", "d_ff", "num_layers", "bias",
                           "tie_embeddings"],
    "attention_flops": ["batch_size", "T_q", "T_k", "d_model", "num_heads"],
    "ffn_flops": ["batch_size", "T", "d_model", "d_ff"],
    "kv_cache_bytes": ["batch_size", "seq_len", "num_layers", "num_kv_heads", "d_k", "dtype"],
}


# ----------------------------------------------------------------------------- helpers


def _show(name, args):
    shown = ", ".join(str(a).removeprefix("torch.") if isinstance(a, torch.dtype) else repr(a) for a in args)
    return f"{name}({shown})"


def _verify(kit, name, calls, expected, *, against):
    """Call name on every args in calls (one round trip), compare exactly, name the mistake on a miss."""
    got = kit.drive(arithmetic_values, [(name, args, {}) for args in calls])
    for args, value in zip(calls, got):
        if isinstance(value, bool) or not isinstance(value, int):
            tip = t(" (use // for d_k = d_model // num_heads, and keep every factor an int)") \
                if isinstance(value, float) else ""
            raise Fail(t("{call} should return a Python int, got {got}{tip}: counts are exact whole numbers",
                         call=_show(name, args), got=describe(value), tip=tip),
                       t("your count is a float: / (true division) or a float factor gives one even when the value is "
                         "whole; use // and keep every factor an int") if isinstance(value, float) else None)
    for args, value, want in zip(calls, got, expected):
        if value != want:
            found = kit.name_mistake((), got, _MISTAKES[name], run=lambda m: [m.impl(*a) for a in calls],
                                     same=lambda u, w: list(u) == list(w))
            raise Fail(t("{call} = {value}, expected {want} ({against})", call=_show(name, args), value=value,
                         want=want, against=against), found)
    return got


def _layer_calls(c):
    return [(c.D, c.H, c.d_ff, b) for b in _BIASES]


# ----------------------------------------------------------------------------- checks


@check("structure", "seven functions: mha_params, encoder_layer_params, decoder_layer_params, transformer_params, "
                    "attention_flops, ffn_flops, kv_cache_bytes")
def structure(kit):
    for name, params in _PARAMS.items():
        expect_structure(kit, name, module=False, params=params)


@check("numerics", "mha_params equals the parameters of nn.MultiheadAttention, with and without biases")
def mha(kit):
    calls = [(c.D, c.H, b) for c in CASES for b in _BIASES]
    want = [_torch_count("mha_params", c, b) for c in CASES for b in _BIASES]
    _verify(kit, "mha_params", calls, want, against=t("nn.MultiheadAttention's parameter count"))


@check("numerics", "encoder_layer_params equals nn.TransformerEncoderLayer's count (bias=True and bias=False)")
def encoder(kit):
    calls = [a for c in CASES for a in _layer_calls(c)]
    want = [_torch_count("encoder_layer_params", c, b) for c in CASES for b in _BIASES]
    _verify(kit, "encoder_layer_params", calls, want, against=t("nn.TransformerEncoderLayer's parameter count"))


@check("numerics", "decoder_layer_params equals nn.TransformerDecoderLayer's count (bias=True and bias=False)")
def decoder(kit):
    calls = [a for c in CASES for a in _layer_calls(c)]
    want = [_torch_count("decoder_layer_params", c, b) for c in CASES for b in _BIASES]
    _verify(kit, "decoder_layer_params", calls, want, against=t("nn.TransformerDecoderLayer's parameter count"))


@check("numerics", "transformer_params equals the interview tutorial's Transformer built from torch modules, tied and untied")
def whole_model(kit):
    settings = [(b, tie) for b in _BIASES for tie in (False, True)]
    calls = [(c.V_s, c.V_t, c.D, c.H, c.d_ff, c.N, b, tie) for c in CASES for b, tie in settings]
    want = [_torch_count("transformer_params", c, b, tie) for c in CASES for b, tie in settings]
    _verify(kit, "transformer_params", calls, want,
            against=t("the parameters of embeddings, torch's encoder and decoder layers and out_proj, counted once "
                      "each"))


@check("numerics", "attention_flops: 2 FLOPs per multiply-add over the projections, Q Kᵀ, A V and W_o")
def attention(kit):
    calls = [case[:5] for case in _FLOP_CASES]
    _verify(kit, "attention_flops", calls, [_attn(*a) for a in calls],
            against=t("2·B·((2·T_q + 2·T_k)·D² + 2·T_q·T_k·D)"))


@check("numerics", "ffn_flops: 2 FLOPs per multiply-add over fc1 and fc2")
def ffn(kit):
    calls = [(B, T_q, D, d_ff) for B, T_q, _, D, _, d_ff in _FLOP_CASES]
    _verify(kit, "ffn_flops", calls, [_ffn_flops(*a) for a in calls], against=t("2 · 2·B·T·D·d_ff"))


@check("numerics", "kv_cache_bytes equals the bytes of real K and V tensors in every layer, for five dtypes")
def kv_cache(kit):
    calls = [(*sizes, dtype) for sizes in _KV_CASES for dtype in _DTYPES]
    _verify(kit, "kv_cache_bytes", calls, [_kv_tensor_bytes(*a) for a in calls],
            against=t("the nbytes of K and V, (B, H_kv, T, d_k) each, times num_layers"))


@check("properties", "the interview tutorial's numbers: MHA 4·d², encoder layer 12·d² + 2·d, decoder layer 16·d² + 3·d "
                     "(d_ff = 4·d, no biases; the d terms are the LayerNorms' γ)")
def seed_numbers(kit):
    d = 512
    names = ("mha_params", "encoder_layer_params", "decoder_layer_params")
    calls = [("mha_params", (d, 8, False), {}), ("encoder_layer_params", (d, 8, 4 * d, False), {}),
             ("decoder_layer_params", (d, 8, 4 * d, False), {})]
    want = (4 * d * d, 12 * d * d + 2 * d, 16 * d * d + 3 * d)
    for name, (_, args, _), value, expected in zip(names, calls, kit.drive(arithmetic_values, calls), want):
        if value != expected:
            raise Fail(t("{call} = {value}, expected {want}: the interview tutorial's 参数量分析 gives {formula} for d_model = {d} "
                         "and d_ff = 4·d_model without biases (the LayerNorms keep γ, D each)", call=_show(name, args),
                         value=value, want=expected, d=d,
                         formula={"mha_params": "4·d²", "encoder_layer_params": "12·d² + 2·d",
                                  "decoder_layer_params": "16·d² + 3·d"}[name]))


@check("properties", "exact at LLaMA scale: attention FLOPs beyond 2^53 and LLaMA-2-7B's 2 GiB KV cache at 4096 tokens")
def large_scale(kit):
    *sizes, want_kv = _LLAMA_KV
    _verify(kit, "kv_cache_bytes", [tuple(sizes)], [want_kv],
            against=t("LLaMA-2-7B: 32 layers × K and V × 32 heads × 4096 tokens × 128 × 2 bytes = 2 GiB"))
    calls = [_HUGE_FLOPS[:5]]
    _verify(kit, "attention_flops", calls, [_attn(*calls[0])],
            against=t("a count beyond 2^53, where a float no longer holds every whole number: keep ints"))
