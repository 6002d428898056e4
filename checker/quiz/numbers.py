"""The numeric questions' generators: a real model's published configuration, drawn, and the answer computed.

A generator takes a random.Random and returns the values its question's text names ({model}, {d_model}...),
with `answer` (a number) and `unit` (count, bytes, flops or plain). A word that differs between the languages
comes as two values, `..._en` and `..._zh`, each text naming its own. The formulas are plain functions of the
configuration, so that tests/quiz/test_numbers.py can hold each one to a count taken from the catalogue's
references themselves (torch's parameter count, torch's FLOP counter, a measured cache). Never imports torch.

Conventions: a multiply-add is 2 FLOPs, and only matrix products are counted; D = d_model, H query heads,
H_kv key/value heads, d_k = D / H, L layers, V vocabulary, B batch, T length.
"""

from __future__ import annotations

import math
from dataclasses import dataclass


@dataclass(frozen=True)
class Model:
    """A published configuration (the model's paper or its released config)."""

    name: str
    layers: int  # an encoder-decoder: layers in each stack
    d_model: int
    heads: int
    kv_heads: int
    d_ff: int  # a MoE: each expert's hidden size
    vocab: int
    gated: bool  # SwiGLU (3 matrices in the FFN) rather than 2
    bias: bool  # Linear biases in attention and FFN
    norm: str = "LayerNorm"  # or "RMSNorm"
    tied: bool = False  # the output head shares the token embedding's weight
    arch: str = "decoder"  # "decoder" (decoder-only), "encoder" or "encoder-decoder"
    positions: int = 0  # learned absolute position embeddings (GPT-2, BERT); 0: none learned
    rope_base: float = 0.0  # RoPE's base; 0: no RoPE
    experts: int = 0  # MoE: experts per layer (0: a dense FFN)
    top_k: int = 0  # MoE: experts each token is routed to
    qkv_bias: bool = False  # biases on W_q, W_k, W_v only (Qwen2)

    @property
    def d_k(self) -> int:
        return self.d_model // self.heads


MODELS = (
    # Vaswani et al. 2017, Table 3; one BPE vocabulary shared by both sides and the output
    Model("Transformer base", 6, 512, 8, 8, 2048, 37000, False, True, tied=True, arch="encoder-decoder"),
    Model("Transformer big", 6, 1024, 16, 16, 4096, 37000, False, True, tied=True, arch="encoder-decoder"),
    # Devlin et al. 2019; the MLM head's decoder is tied to the word embedding
    Model("BERT-base", 12, 768, 12, 12, 3072, 30522, False, True, tied=True, arch="encoder", positions=512),
    Model("BERT-large", 24, 1024, 16, 16, 4096, 30522, False, True, tied=True, arch="encoder", positions=512),
    # Lewis et al. 2020 (facebook/bart-base, bart-large): post-LN, biases everywhere
    Model("BART-base", 6, 768, 12, 12, 3072, 50265, False, True, tied=True, arch="encoder-decoder"),
    Model("BART-large", 12, 1024, 16, 16, 4096, 50265, False, True, tied=True, arch="encoder-decoder"),
    # Radford et al. 2019 (openai-community/gpt2*): pre-LN, 1024 learned positions, tied head
    Model("GPT-2 small", 12, 768, 12, 12, 3072, 50257, False, True, tied=True, positions=1024),
    Model("GPT-2 medium", 24, 1024, 16, 16, 4096, 50257, False, True, tied=True, positions=1024),
    Model("GPT-2 large", 36, 1280, 20, 20, 5120, 50257, False, True, tied=True, positions=1024),
    Model("GPT-2 XL", 48, 1600, 25, 25, 6400, 50257, False, True, tied=True, positions=1024),
    # Llama-style: RMSNorm, SwiGLU, RoPE, no biases, untied head
    Model("Llama 2 7B", 32, 4096, 32, 32, 11008, 32000, True, False, "RMSNorm", rope_base=10000.0),
    Model("Llama 2 13B", 40, 5120, 40, 40, 13824, 32000, True, False, "RMSNorm", rope_base=10000.0),
    Model("Llama 2 70B", 80, 8192, 64, 8, 28672, 32000, True, False, "RMSNorm", rope_base=10000.0),
    Model("Llama 3 8B", 32, 4096, 32, 8, 14336, 128256, True, False, "RMSNorm", rope_base=500000.0),
    Model("Llama 3 70B", 80, 8192, 64, 8, 28672, 128256, True, False, "RMSNorm", rope_base=500000.0),
    Model("Mistral 7B", 32, 4096, 32, 8, 14336, 32000, True, False, "RMSNorm", rope_base=10000.0),
    Model("Qwen2 7B", 28, 3584, 28, 4, 18944, 152064, True, False, "RMSNorm", rope_base=1000000.0,
          qkv_bias=True),
    # Jiang et al. 2024 (mistralai/Mixtral-8x7B-v0.1, Mixtral-8x22B-Instruct-v0.1): 8 SwiGLU experts, top-2
    Model("Mixtral 8x7B", 32, 4096, 32, 8, 14336, 32000, True, False, "RMSNorm", rope_base=1000000.0,
          experts=8, top_k=2),
    Model("Mixtral 8x22B", 56, 6144, 48, 8, 16384, 32768, True, False, "RMSNorm", rope_base=1000000.0,
          experts=8, top_k=2),
)


@dataclass(frozen=True)
class LatentModel:
    """A model with multi-head latent attention (DeepSeek-V2, §2.1; its released configs)."""

    name: str
    layers: int
    d_model: int
    heads: int
    d_latent: int  # d_c, kv_lora_rank
    d_rope: int  # d_h^R, qk_rope_head_dim
    d_nope: int  # d_h, qk_nope_head_dim


MLA_MODELS = (
    LatentModel("DeepSeek-V2", 60, 5120, 128, 512, 64, 128),
    LatentModel("DeepSeek-V2-Lite", 27, 2048, 16, 512, 64, 128),
    LatentModel("DeepSeek-V3", 61, 7168, 128, 512, 64, 128),
)

ALIBI_MODELS = (("MPT-7B", 32), ("MPT-30B", 64), ("BLOOM-7B1", 32))  # (name, heads), heads a power of two

# A storage type: its name and bytes per element
DTYPES = (("fp16", 2), ("bf16", 2), ("fp32", 4), ("fp8", 1))


def shown(value) -> str:
    """A value as the question prints it: integers with thousands separators, floats short."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return str(value)
    if isinstance(value, float) and not value.is_integer():
        if 1_000 <= abs(value) < 1e15:
            return f"{value:,.1f}"  # 10,922.7, not 1.092e+04
        return f"{value:.4g}"
    return f"{int(value):,}" if abs(value) >= 10_000 else str(int(value))


def _short(n: float) -> str:
    """6738415616 -> '6.74B', 131072000 -> '131M': how a size is said aloud."""
    for scale, suffix in ((1e12, "T"), (1e9, "B"), (1e6, "M"), (1e3, "K")):
        if n >= scale:
            return f"{n / scale:.3g}{suffix}"
    return f"{n:.3g}"


def _approx(n: float) -> str:
    """A large number said short: 6.74B, 8.09e+22; a small one as shown."""
    if abs(n) >= 1e15:
        return f"{n:.3g}"
    return _short(n) if abs(n) >= 1e4 else shown(n)


def _gib(n: float) -> str:
    return f"{n / 2**30:.3g} GiB"


# ----------------------------------------------------------------------------- formulas: parameters


def linear_params(d_in: int, d_out: int, bias: bool) -> int:
    """A Linear layer: weight (d_out, d_in) + bias (d_out,): d_in·d_out (+ d_out)."""
    return d_in * d_out + (d_out if bias else 0)


def mha_params(d_model: int, bias: bool = True) -> int:
    """W_q, W_k, W_v, W_o, each D×D (+ D bias): 4·D² + 4·D; the number of heads does not enter (H·d_k = D)."""
    return 4 * (d_model * d_model + (d_model if bias else 0))


def gqa_params(d_model: int, heads: int, kv_heads: int, qkv_bias: bool = False, o_bias: bool = False) -> int:
    """W_q, W_o D×D; W_k, W_v D×(H_kv·d_k): 2·D² + 2·D·H_kv·d_k (+ biases); MQA is H_kv = 1, MHA H_kv = H."""
    kv = kv_heads * (d_model // heads)  # width of K and V: H_kv·d_k
    return (linear_params(d_model, d_model, qkv_bias) + 2 * linear_params(d_model, kv, qkv_bias)
            + linear_params(d_model, d_model, o_bias))


def ffn_params(d_model: int, d_ff: int, bias: bool = True) -> int:
    """fc1 D→d_ff and fc2 d_ff→D: 2·D·d_ff (+ d_ff + D biases)."""
    return linear_params(d_model, d_ff, bias) + linear_params(d_ff, d_model, bias)


def swiglu_params(d_model: int, d_ff: int) -> int:
    """W_gate and W_up D→d_ff, W_down d_ff→D, no biases: 3·D·d_ff."""
    return 3 * d_model * d_ff


def swiglu_matching_d_ff(d_model: int, ratio: int = 4) -> float:
    """The SwiGLU hidden size with the parameters of a 2-matrix FFN of ratio·D: 3·D·h = 2·D·(ratio·D), h = 2·ratio·D/3."""
    return 2 * ratio * d_model / 3


def norm_params(d_model: int, norm: str) -> int:
    """LayerNorm: γ and β, 2·D; RMSNorm: γ only, D."""
    return {"LayerNorm": 2, "RMSNorm": 1}[norm] * d_model


def model_norm_params(layers: int, d_model: int, norm: str) -> int:
    """A pre-norm decoder: 2 norms a layer and a final one, (2·L + 1) norms."""
    return (2 * layers + 1) * norm_params(d_model, norm)


def encoder_layer_params(d_model: int, d_ff: int) -> int:
    """Self-attention + FFN + 2 LayerNorms, biases everywhere: (4D² + 4D) + (2·D·d_ff + d_ff + D) + 4D."""
    return mha_params(d_model) + ffn_params(d_model, d_ff) + 2 * norm_params(d_model, "LayerNorm")


def decoder_layer_params(d_model: int, d_ff: int) -> int:
    """Masked self-attention + cross-attention + FFN + 3 LayerNorms: 2·(4D² + 4D) + (2·D·d_ff + d_ff + D) + 6D."""
    return 2 * mha_params(d_model) + ffn_params(d_model, d_ff) + 3 * norm_params(d_model, "LayerNorm")


def embedding_head_params(vocab: int, d_model: int, tied: bool) -> int:
    """Token embedding V×D and an output head D→V without bias: V·D when they share the weight, else 2·V·D."""
    return vocab * d_model * (1 if tied else 2)


def expert_params(m: Model) -> int:
    """One FFN (one expert of a MoE): SwiGLU 3·D·d_ff, or 2·D·d_ff (+ biases)."""
    return swiglu_params(m.d_model, m.d_ff) if m.gated else ffn_params(m.d_model, m.d_ff, m.bias)


def moe_ffn_params(m: Model, active: bool = False) -> int:
    """Router D×E + E experts (only top_k of them when active, the ones a token runs through)."""
    return m.d_model * m.experts + (m.top_k if active else m.experts) * expert_params(m)


def layer_params(m: Model, active: bool = False) -> int:
    """One pre-norm decoder layer: attention + FFN (or MoE) + 2 norms."""
    attention = gqa_params(m.d_model, m.heads, m.kv_heads, m.bias or m.qkv_bias, m.bias)
    ffn = moe_ffn_params(m, active) if m.experts else expert_params(m)
    return attention + ffn + 2 * norm_params(m.d_model, m.norm)


def model_params(m: Model, active: bool = False) -> int:
    """A decoder-only model: V·D + positions·D + L·layer + final norm + head V·D (none when tied)."""
    embeddings = m.vocab * m.d_model + m.positions * m.d_model
    head = 0 if m.tied else m.vocab * m.d_model
    return embeddings + m.layers * layer_params(m, active) + norm_params(m.d_model, m.norm) + head


def lora_params(rank: int, shapes: list[tuple[int, int]], layers: int) -> int:
    """A (r, d_in) and B (d_out, r) for every adapted matrix, in every layer: L·Σ r·(d_in + d_out)."""
    return layers * sum(rank * (d_in + d_out) for d_in, d_out in shapes)


def lora_shapes(m: Model, targets: tuple[str, ...]) -> list[tuple[int, int]]:
    """(d_in, d_out) of the named matrices of one Llama-style layer."""
    kv = m.kv_heads * m.d_k
    every = {"q_proj": (m.d_model, m.d_model), "k_proj": (m.d_model, kv), "v_proj": (m.d_model, kv),
             "o_proj": (m.d_model, m.d_model), "gate_proj": (m.d_model, m.d_ff), "up_proj": (m.d_model, m.d_ff),
             "down_proj": (m.d_ff, m.d_model)}
    return [every[name] for name in targets]


# ----------------------------------------------------------------------------- formulas: FLOPs


def attention_score_flops(batch: int, length: int, heads: int, d_k: int) -> int:
    """Q·Kᵀ (T×d_k by d_k×T) and A·V (T×T by T×d_k) in every head: 2 · 2·B·H·T²·d_k = 4·B·T²·D."""
    return 2 * 2 * batch * heads * length * length * d_k


def projection_flops(batch: int, length: int, d_model: int, heads: int, kv_heads: int) -> int:
    """W_q, W_o (D×D) and W_k, W_v (D×H_kv·d_k) on B·T rows: 2·B·T·(2·D² + 2·D·H_kv·d_k)."""
    kv = kv_heads * (d_model // heads)
    return 2 * batch * length * (2 * d_model * d_model + 2 * d_model * kv)


def score_projection_crossover(d_model: int, heads: int, kv_heads: int) -> int:
    """The length at which Q·Kᵀ and A·V cost what the projections cost: 4·T²·D = 2·T·(2D² + 2·D·H_kv·d_k),
    T = D + H_kv·d_k (2·D for MHA)."""
    return d_model + kv_heads * (d_model // heads)


def ffn_flops(tokens: int, d_model: int, d_ff: int, gated: bool) -> int:
    """2 FLOPs per multiply-add, per token: 2·2·D·d_ff (2 matrices) or 2·3·D·d_ff (SwiGLU)."""
    return 2 * (3 if gated else 2) * tokens * d_model * d_ff


def moe_layer_flops(tokens: int, d_model: int, d_ff: int, experts: int, top_k: int) -> int:
    """The router (D×E) on every token, then top_k SwiGLU experts per token: 2·n·D·E + n·k·6·D·d_ff."""
    return 2 * tokens * d_model * experts + tokens * top_k * 2 * 3 * d_model * d_ff


def training_flops(params: int, tokens: int) -> int:
    """Forward 2·N per token, backward 4·N (gradients of the inputs and of the weights): 6·N·D."""
    return 6 * params * tokens


# ----------------------------------------------------------------------------- formulas: memory


def attention_weights_bytes(batch: int, heads: int, length: int, nbytes: int) -> int:
    """The softmax weights of one layer, (B, H, T, T): B·H·T²·bytes."""
    return batch * heads * length * length * nbytes


def kv_cache_bytes(layers: int, batch: int, length: int, kv_heads: int, d_k: int, nbytes: int) -> int:
    """K and V, each (B, H_kv, T, d_k), in every layer: 2·L·B·T·H_kv·d_k·bytes."""
    return 2 * layers * batch * length * kv_heads * d_k * nbytes


def mla_cache_bytes(layers: int, batch: int, length: int, d_latent: int, d_rope: int, nbytes: int) -> int:
    """MLA caches the latent c_kv (d_c) and the shared RoPE key (d_R) per token and layer: L·B·T·(d_c + d_R)·bytes."""
    return layers * batch * length * (d_latent + d_rope) * nbytes


def weights_bytes(params: int, nbytes: float) -> float:
    """The weights alone: N·bytes per parameter (int4: 0.5)."""
    return params * nbytes


# Bytes per parameter of AdamW training, weights, gradients and the two moments (ZeRO's accounting, §3.1):
# fp32: 4 + 4 + 4 + 4; mixed precision: fp16 weights 2 + fp16 gradients 2 + fp32 master weights, m, v 4 + 4 + 4.
ADAMW_BYTES = {"fp32": {"weights": 4, "grads": 4, "states": 8}, "mixed": {"weights": 2, "grads": 2, "states": 12}}


def adamw_bytes(params: int, precision: str, states_only: bool = False) -> int:
    """fp32: 16·N (8·N of state, m and v); mixed: 16·N (12·N of state: master copy, m and v)."""
    per = ADAMW_BYTES[precision]
    return params * (per["states"] if states_only else per["weights"] + per["grads"] + per["states"])


def zero_bytes_per_gpu(params: int, stage: int, gpus: int) -> float:
    """Mixed-precision AdamW on N_d GPUs: stage 1 shards the 12·N of state, 2 the gradients too, 3 the weights too:
    2N + 2N + 12N/N_d; 2N + 14N/N_d; 16N/N_d."""
    weights, grads, states = 2 * params, 2 * params, 12 * params
    if stage >= 1:
        states /= gpus
    if stage >= 2:
        grads /= gpus
    if stage >= 3:
        weights /= gpus
    return weights + grads + states


# ----------------------------------------------------------------------------- formulas: positions, decoding, RL


def rope_angle(position: int, pair: int, d_k: int, base: float) -> float:
    """Pair i of a head at position p is rotated by p·θ_i, θ_i = base^(−2i/d_k) (radians)."""
    return position * base ** (-2 * pair / d_k)


def rope_wavelength(pair: int, d_k: int, base: float) -> float:
    """Positions for pair i to turn once: 2π/θ_i = 2π·base^(2i/d_k)."""
    return 2 * math.pi * base ** (2 * pair / d_k)


def sinusoidal_pe(position: int, column: int, d_model: int) -> float:
    """PE[pos, 2i] = sin(pos / 10000^(2i/D)), PE[pos, 2i+1] = cos(pos / 10000^(2i/D))."""
    angle = position / 10000 ** ((column - column % 2) / d_model)
    return math.sin(angle) if column % 2 == 0 else math.cos(angle)


def alibi_slope(head: int, heads: int) -> float:
    """Head h (from 1) of H, H a power of two: m_h = 2^(−8h/H)."""
    assert heads & (heads - 1) == 0, "the simple rule holds for a power of two"
    return 2.0 ** (-8 * head / heads)


def speculative_tokens(alpha: float, gamma: int) -> float:
    """Tokens per target call with γ drafts each accepted with chance α: (1 − α^(γ+1)) / (1 − α)."""
    return (1 - alpha ** (gamma + 1)) / (1 - alpha)


def dpo_loss(policy_chosen: float, policy_rejected: float, ref_chosen: float, ref_rejected: float,
             beta: float) -> float:
    """−log σ(β·((log π(y_w) − log π_ref(y_w)) − (log π(y_l) − log π_ref(y_l)))) = log(1 + e^(−β·margin))."""
    margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
    return math.log1p(math.exp(-beta * margin))


def grpo_advantage(rewards: list[float], index: int, eps: float = 0.0) -> float:
    """(r_i − mean(r)) / (std(r) + eps), the group's std with G − 1 in the denominator (as TRL)."""
    g = len(rewards)
    mean = sum(rewards) / g
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (g - 1))
    return (rewards[index] - mean) / (std + eps)


# ----------------------------------------------------------------------------- what a generator draws

_LLAMA = tuple(m for m in MODELS if m.gated and not m.qkv_bias and not m.experts)  # no biases anywhere
_DECODERS = tuple(m for m in MODELS if m.arch == "decoder")
_TWO_MATRIX = tuple(m for m in MODELS if not m.gated)  # fc1, fc2 with biases
_BYTES_EN = "Answer in bytes, or with a unit such as GiB."
_BYTES_ZH = "用字节作答，也可以带单位，如 GiB。"


def _dtype(rng, choices=DTYPES) -> tuple[str, int]:
    return rng.choice(choices)


def _answer(value, unit: str, **values) -> dict:
    if isinstance(value, float) and value.is_integer():
        value = int(value)  # 3,369,207,808 bytes, not 3369207808.0
    return {**values, "answer": value, "unit": unit, "approx": _approx(value)}


# ----------------------------------------------------------------------------- generators: heads


def gen_mha_params(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.bias and m.heads == m.kv_heads])
    return _answer(mha_params(m.d_model, True), "count", model=m.name, d_model=m.d_model, heads=m.heads)


def gen_gqa_params(rng) -> dict:
    m = rng.choice([m for m in _LLAMA if m.kv_heads < m.heads])
    kv = m.kv_heads * m.d_k
    return _answer(gqa_params(m.d_model, m.heads, m.kv_heads), "count", model=m.name, d_model=m.d_model,
                   heads=m.heads, kv_heads=m.kv_heads, d_k=m.d_k, kv=kv, dd=m.d_model * m.d_model,
                   dkv=m.d_model * kv)


def gen_gqa_kv_saving(rng) -> dict:
    m = rng.choice([m for m in _DECODERS if m.kv_heads < m.heads])
    batch, length = rng.choice((1, 4, 8, 16, 32)), rng.choice((2048, 4096, 8192, 16384, 32768))
    dtype, nbytes = _dtype(rng, DTYPES[:2])
    mha = kv_cache_bytes(m.layers, batch, length, m.heads, m.d_k, nbytes)
    gqa = kv_cache_bytes(m.layers, batch, length, m.kv_heads, m.d_k, nbytes)
    return _answer(mha - gqa, "bytes", model=m.name, layers=m.layers, heads=m.heads, kv_heads=m.kv_heads,
                   d_k=m.d_k, batch=batch, length=length, dtype=dtype, nbytes=nbytes, mha=mha, gqa=gqa,
                   mha_gib=_gib(mha), gqa_gib=_gib(gqa), answer_gib=_gib(mha - gqa), ratio=m.heads // m.kv_heads,
                   bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


def gen_mla_cache_bytes(rng) -> dict:
    m = rng.choice(MLA_MODELS)
    batch, length = rng.choice((1, 2, 4, 8, 16)), rng.choice((4096, 8192, 32768, 65536, 131072))
    dtype, nbytes = _dtype(rng, DTYPES[:2])
    answer = mla_cache_bytes(m.layers, batch, length, m.d_latent, m.d_rope, nbytes)
    mha = kv_cache_bytes(m.layers, batch, length, m.heads, m.d_nope, nbytes)
    return _answer(answer, "bytes", model=m.name, layers=m.layers, heads=m.heads, d_latent=m.d_latent,
                   d_rope=m.d_rope, d_nope=m.d_nope, batch=batch, length=length, dtype=dtype, nbytes=nbytes,
                   per_token=m.d_latent + m.d_rope, answer_gib=_gib(answer), mha_gib=_gib(mha),
                   ratio=round(mha / answer, 1), bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


# ----------------------------------------------------------------------------- generators: attention


def gen_attention_score_flops(rng) -> dict:
    m = rng.choice(_DECODERS)
    batch, length = rng.choice((1, 2, 4, 8, 16)), rng.choice((512, 1024, 2048, 4096, 8192))
    return _answer(attention_score_flops(batch, length, m.heads, m.d_k), "flops", model=m.name,
                   d_model=m.d_model, heads=m.heads, d_k=m.d_k, batch=batch, length=length)


def gen_attention_weights_bytes(rng) -> dict:
    m = rng.choice(_DECODERS)
    batch, length = rng.choice((1, 2, 4, 8, 16)), rng.choice((1024, 2048, 4096, 8192, 16384))
    dtype, nbytes = _dtype(rng, DTYPES[:3])
    answer = attention_weights_bytes(batch, m.heads, length, nbytes)
    return _answer(answer, "bytes", model=m.name, heads=m.heads, batch=batch, length=length, dtype=dtype,
                   nbytes=nbytes, answer_gib=_gib(answer), bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


def gen_score_projection_crossover(rng) -> dict:
    m = rng.choice(_DECODERS)
    kv = m.kv_heads * m.d_k
    return _answer(score_projection_crossover(m.d_model, m.heads, m.kv_heads), "count", model=m.name,
                   d_model=m.d_model, heads=m.heads, kv_heads=m.kv_heads, d_k=m.d_k, kv=kv)


# ----------------------------------------------------------------------------- generators: FFN


def gen_ffn_params(rng) -> dict:
    m = rng.choice(_TWO_MATRIX)
    return _answer(ffn_params(m.d_model, m.d_ff), "count", model=m.name, d_model=m.d_model, d_ff=m.d_ff,
                   weights=2 * m.d_model * m.d_ff, biases=m.d_ff + m.d_model)


def gen_swiglu_params(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.gated and not m.experts])
    return _answer(swiglu_params(m.d_model, m.d_ff), "count", model=m.name, d_model=m.d_model, d_ff=m.d_ff)


def gen_swiglu_matching_d_ff(rng) -> dict:
    m = rng.choice(MODELS)
    return _answer(swiglu_matching_d_ff(m.d_model), "count", model=m.name, d_model=m.d_model,
                   d_ff_relu=4 * m.d_model, budget=8 * m.d_model * m.d_model)


def gen_ffn_flops(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.gated and not m.experts])
    batch, length = rng.choice((1, 2, 4, 8)), rng.choice((512, 1024, 2048, 4096))
    tokens = batch * length
    return _answer(ffn_flops(tokens, m.d_model, m.d_ff, True), "flops", model=m.name, d_model=m.d_model,
                   d_ff=m.d_ff, batch=batch, length=length, tokens=tokens)


def gen_moe_params(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.experts])
    active = rng.random() < 0.5
    kv = m.kv_heads * m.d_k
    attention = gqa_params(m.d_model, m.heads, m.kv_heads)
    return _answer(model_params(m, active), "count", model=m.name, layers=m.layers, d_model=m.d_model,
                   heads=m.heads, kv_heads=m.kv_heads, d_k=m.d_k, kv=kv, d_ff=m.d_ff, vocab=m.vocab,
                   experts=m.experts, top_k=m.top_k, used=m.top_k if active else m.experts,
                   attention=attention, expert=expert_params(m), router=m.d_model * m.experts,
                   total=_short(model_params(m)), active=_short(model_params(m, True)),
                   which_en=("How many parameters are active for one token (used in its forward pass)" if active
                             else "How many parameters does it hold in all"),
                   which_zh="处理一个 token 时有多少参数被激活（参与它的前向计算）" if active else "它总共有多少参数")


# ----------------------------------------------------------------------------- generators: normalisation


def gen_norm_params(rng) -> dict:
    m = rng.choice([m for m in _DECODERS if not m.experts])
    return _answer(model_norm_params(m.layers, m.d_model, m.norm), "count", model=m.name, layers=m.layers,
                   d_model=m.d_model, norm=m.norm, norms=2 * m.layers + 1, per_norm=norm_params(m.d_model, m.norm),
                   vectors_en="two vectors of size D, γ and β" if m.norm == "LayerNorm" else "one vector of size D, γ",
                   vectors_zh="有 γ 和 β 两个向量" if m.norm == "LayerNorm" else "只有 γ 一个向量")


# ----------------------------------------------------------------------------- generators: positions


def gen_rope_angle(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.rope_base])
    position, pair = rng.randrange(1, 4097), rng.randrange(1, m.d_k // 2)
    return _answer(rope_angle(position, pair, m.d_k, m.rope_base), "plain", model=m.name, d_k=m.d_k,
                   base=int(m.rope_base), position=position, pair=pair, theta=m.rope_base ** (-2 * pair / m.d_k))


def gen_rope_wavelength(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.rope_base])
    pair = rng.randrange(1, m.d_k // 2)
    return _answer(rope_wavelength(pair, m.d_k, m.rope_base), "plain", model=m.name, d_k=m.d_k,
                   base=int(m.rope_base), pair=pair, theta=m.rope_base ** (-2 * pair / m.d_k))


def gen_sinusoidal_pe(rng) -> dict:
    d_model = rng.choice((512, 1024))
    while True:  # a value a candidate can be judged on: not near 0 (a 2% tolerance of 0 is nothing) nor 1
        position, column = rng.randrange(1, 100), rng.randrange(0, 24)
        value = sinusoidal_pe(position, column, d_model)
        if 0.1 < value < 0.97:
            break
    two_i = column - column % 2
    return _answer(value, "plain", model="Transformer base" if d_model == 512 else "Transformer big",
                   d_model=d_model, position=position, column=column, two_i=two_i,
                   fn="sin" if column % 2 == 0 else "cos", angle=position / 10000 ** (two_i / d_model))


def gen_alibi_slope(rng) -> dict:
    name, heads = rng.choice(ALIBI_MODELS)
    head = rng.randrange(1, heads + 1)
    return _answer(alibi_slope(head, heads), "plain", model=name, heads=heads, head=head,
                   exponent=f"{8 * head / heads:g}")


# ----------------------------------------------------------------------------- generators: the whole model


def gen_encoder_layer_params(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.arch != "decoder"])
    return _answer(encoder_layer_params(m.d_model, m.d_ff), "count", model=m.name, d_model=m.d_model,
                   heads=m.heads, d_ff=m.d_ff, attention=mha_params(m.d_model), ffn=ffn_params(m.d_model, m.d_ff),
                   norms=4 * m.d_model)


def gen_decoder_layer_params(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.arch == "encoder-decoder"])
    return _answer(decoder_layer_params(m.d_model, m.d_ff), "count", model=m.name, d_model=m.d_model,
                   heads=m.heads, d_ff=m.d_ff, attention=mha_params(m.d_model), ffn=ffn_params(m.d_model, m.d_ff),
                   norms=6 * m.d_model)


def gen_embedding_head_params(rng) -> dict:
    m = rng.choice([m for m in _DECODERS if not m.qkv_bias])
    return _answer(embedding_head_params(m.vocab, m.d_model, m.tied), "count", model=m.name, vocab=m.vocab,
                   d_model=m.d_model, vd=m.vocab * m.d_model,
                   tied_en="shares its weight with the token embedding (tied)" if m.tied
                   else "has its own weight (untied)",
                   tied_zh="与词嵌入共享权重（tied）" if m.tied else "有自己独立的权重（不共享）",
                   count_en="Tied, they are one matrix, counted once: V·D" if m.tied
                   else "Untied, they are two matrices: 2·V·D",
                   count_zh="共享权重时两者是同一个矩阵，只算一次：V·D" if m.tied else "不共享时是两个矩阵：2·V·D")


def gen_llama_params(rng) -> dict:
    m = rng.choice(_LLAMA)
    kv = m.kv_heads * m.d_k
    return _answer(model_params(m), "count", model=m.name, layers=m.layers, d_model=m.d_model, heads=m.heads,
                   kv_heads=m.kv_heads, d_k=m.d_k, kv=kv, d_ff=m.d_ff, vocab=m.vocab,
                   attention=gqa_params(m.d_model, m.heads, m.kv_heads), ffn=swiglu_params(m.d_model, m.d_ff),
                   layer=layer_params(m), embedding=m.vocab * m.d_model)


def gen_gpt2_params(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.name.startswith("GPT-2")])
    return _answer(model_params(m), "count", model=m.name, layers=m.layers, d_model=m.d_model, heads=m.heads,
                   d_ff=m.d_ff, vocab=m.vocab, positions=m.positions, layer=layer_params(m),
                   embedding=m.vocab * m.d_model, position_table=m.positions * m.d_model)


# ----------------------------------------------------------------------------- generators: efficiency


def gen_kv_cache_bytes(rng) -> dict:
    m = rng.choice(_DECODERS)
    batch, length = rng.choice((1, 4, 8, 16, 32, 64)), rng.choice((1024, 2048, 4096, 8192, 32768))
    dtype, nbytes = _dtype(rng)
    answer = kv_cache_bytes(m.layers, batch, length, m.kv_heads, m.d_k, nbytes)
    return _answer(answer, "bytes", model=m.name, layers=m.layers, heads=m.heads, kv_heads=m.kv_heads, d_k=m.d_k,
                   batch=batch, length=length, dtype=dtype, nbytes=nbytes, answer_gib=_gib(answer),
                   bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


def gen_projection_flops(rng) -> dict:
    m = rng.choice(_DECODERS)
    batch, length = rng.choice((1, 2, 4, 8)), rng.choice((512, 1024, 2048, 4096))
    kv = m.kv_heads * m.d_k
    return _answer(projection_flops(batch, length, m.d_model, m.heads, m.kv_heads), "flops", model=m.name,
                   d_model=m.d_model, heads=m.heads, kv_heads=m.kv_heads, d_k=m.d_k, kv=kv, batch=batch,
                   length=length)


def gen_moe_layer_flops(rng) -> dict:
    m = rng.choice([m for m in MODELS if m.experts])
    tokens = rng.choice((1, 2, 4, 8, 16, 32)) * 1024
    return _answer(moe_layer_flops(tokens, m.d_model, m.d_ff, m.experts, m.top_k), "flops", model=m.name,
                   d_model=m.d_model, d_ff=m.d_ff, experts=m.experts, top_k=m.top_k, tokens=tokens)


def gen_weights_bytes(rng) -> dict:
    m = rng.choice(_DECODERS)
    dtype, nbytes = rng.choice((("fp32", 4), ("bf16", 2), ("fp16", 2), ("int8", 1), ("int4", 0.5)))
    params = model_params(m)
    answer = weights_bytes(params, nbytes)
    return _answer(answer, "bytes", model=m.name, params=params, params_short=_short(params), dtype=dtype,
                   nbytes=nbytes, answer_gib=_gib(answer), bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


def gen_speculative_tokens(rng) -> dict:
    alpha, gamma = rng.choice((0.5, 0.6, 0.7, 0.75, 0.8, 0.85, 0.9)), rng.randrange(2, 9)
    return _answer(speculative_tokens(alpha, gamma), "plain", alpha=alpha, gamma=gamma, gamma1=gamma + 1)


# ----------------------------------------------------------------------------- generators: training


def gen_training_flops(rng) -> dict:
    m = rng.choice(_LLAMA + tuple(m for m in MODELS if m.name.startswith("GPT-2")))
    tokens = rng.choice((100, 300, 500, 1000, 1400, 2000, 15000)) * 10**9
    params = model_params(m)
    return _answer(training_flops(params, tokens), "flops", model=m.name, params=params,
                   params_short=_short(params), tokens=tokens, tokens_short=_short(tokens))


def gen_adamw_bytes(rng) -> dict:
    m = rng.choice(_DECODERS)
    precision, states_only = rng.choice(("fp32", "mixed")), rng.random() < 0.5
    params = model_params(m)
    per = ADAMW_BYTES[precision]
    per_param = per["states"] if states_only else per["weights"] + per["grads"] + per["states"]
    answer = adamw_bytes(params, precision, states_only)
    what_en = ("the optimizer's state alone" if states_only else "the weights, the gradients and the optimizer's state")
    what_zh = "仅优化器状态" if states_only else "权重、梯度和优化器状态合计"
    if precision == "fp32":
        how_en, how_zh = "everything in fp32", "全部用 fp32"
        parts = "m 4 + v 4" if states_only else "weights 4 + gradients 4 + m 4 + v 4"
        parts_zh = "m 4 + v 4" if states_only else "权重 4 + 梯度 4 + m 4 + v 4"
    else:
        how_en = "mixed precision: fp16 weights and gradients, with an fp32 master copy of the weights in the optimizer"
        how_zh = "混合精度：权重和梯度为 fp16，优化器中另存一份 fp32 主权重"
        parts = ("master copy 4 + m 4 + v 4" if states_only
                 else "fp16 weights 2 + fp16 gradients 2 + master copy 4 + m 4 + v 4")
        parts_zh = "主权重 4 + m 4 + v 4" if states_only else "fp16 权重 2 + fp16 梯度 2 + 主权重 4 + m 4 + v 4"
    return _answer(answer, "bytes", model=m.name, params=params, params_short=_short(params), per_param=per_param,
                   what_en=what_en, what_zh=what_zh, how_en=how_en, how_zh=how_zh, parts_en=parts,
                   parts_zh=parts_zh, answer_gib=_gib(answer), bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


def gen_zero_bytes(rng) -> dict:
    m = rng.choice(_DECODERS)
    stage, gpus = rng.choice((1, 2, 3)), rng.choice((8, 16, 32, 64, 128))
    params = model_params(m)
    answer = zero_bytes_per_gpu(params, stage, gpus)
    formula = {1: "2N + 2N + 12N/N_d", 2: "2N + (2N + 12N)/N_d", 3: "(2N + 2N + 12N)/N_d"}[stage]
    return _answer(answer, "bytes", model=m.name, params=params, params_short=_short(params), stage=stage,
                   gpus=gpus, formula=formula, answer_gib=_gib(answer), bytes_en=_BYTES_EN, bytes_zh=_BYTES_ZH)


# ----------------------------------------------------------------------------- generators: post-training


_LORA_TARGETS = (("q_proj", "v_proj"), ("q_proj", "k_proj", "v_proj", "o_proj"),
                 ("q_proj", "k_proj", "v_proj", "o_proj", "gate_proj", "up_proj", "down_proj"))


def gen_lora_params(rng) -> dict:
    m = rng.choice(_LLAMA)
    rank, targets = rng.choice((4, 8, 16, 32, 64)), rng.choice(_LORA_TARGETS)
    shapes = lora_shapes(m, targets)
    per_layer = lora_params(rank, shapes, 1)
    terms = " + ".join(f"{rank}·({d_in} + {d_out})" for d_in, d_out in shapes)
    return _answer(lora_params(rank, shapes, m.layers), "count", model=m.name, layers=m.layers,
                   d_model=m.d_model, heads=m.heads, kv_heads=m.kv_heads, d_k=m.d_k, kv=m.kv_heads * m.d_k,
                   d_ff=m.d_ff, rank=rank, targets=", ".join(targets), targets_zh="、".join(targets), terms=terms, per_layer=per_layer,
                   share=f"{100 * lora_params(rank, shapes, m.layers) / model_params(m):.2g}%")


def gen_dpo_loss(rng) -> dict:
    beta = rng.choice((0.05, 0.1, 0.2, 0.5))
    while True:
        ref_chosen, ref_rejected = -rng.randrange(20, 120), -rng.randrange(20, 120)
        policy_chosen = ref_chosen + rng.randrange(-8, 13)
        policy_rejected = ref_rejected + rng.randrange(-12, 9)
        margin = (policy_chosen - ref_chosen) - (policy_rejected - ref_rejected)
        if margin and abs(beta * margin) < 4:  # a loss not lost in rounding
            break
    return _answer(dpo_loss(policy_chosen, policy_rejected, ref_chosen, ref_rejected, beta), "plain", beta=beta,
                   policy_chosen=policy_chosen, policy_rejected=policy_rejected, ref_chosen=ref_chosen,
                   ref_rejected=ref_rejected, chosen_ratio=policy_chosen - ref_chosen,
                   rejected_ratio=policy_rejected - ref_rejected, margin=margin, z=beta * margin)


def gen_grpo_advantage(rng) -> dict:
    group = rng.choice((4, 6, 8, 12, 16))
    right = rng.randrange(1, group)
    rewards = [1.0] * right + [0.0] * (group - right)
    mean = right / group
    std = math.sqrt(sum((r - mean) ** 2 for r in rewards) / (group - 1))
    return _answer(grpo_advantage(rewards, 0), "plain", group=group, right=right, wrong=group - right,
                   mean=mean, std=std)
