"""The numeric questions' formulas hold to what the catalogue's references really do, on small configurations:
torch's own parameter count of the reference modules, torch's FLOP counter on their forward passes, the bytes
their caches and AdamW's state really hold, the values their tables and rotations really give, and a seeded
simulation of the reference speculative decoder. Then every generator's answer is its formula on the values its
question shows, and every answer reads back through checker.quiz.judge."""

import functools
import importlib.util
import math
import random
import re
import tomllib
from pathlib import Path

import pytest
import torch
import torch.nn.functional as F
from torch import nn
from torch.utils.flop_counter import FlopCounterMode

from checker import quiz
from checker.quiz import numbers as N
from checker.quiz.numbers import Model

SOLUTIONS = Path(__file__).resolve().parents[2] / "solutions" / "torch"


@functools.cache
def ref(name: str):
    """The reference answer solutions/torch/NAME.py, imported from its file."""
    spec = importlib.util.spec_from_file_location(f"quiz_reference_{name}", SOLUTIONS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def count(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters())  # a shared (tied) weight is counted once


def trainable(module: nn.Module) -> int:
    return sum(p.numel() for p in module.parameters() if p.requires_grad)


def flops(fn, *args) -> tuple[int, dict]:
    """The FLOPs torch counts while fn(*args) runs, in all and by op (bmm, mm, addmm)."""
    with FlopCounterMode(display=False) as counter:
        fn(*args)
    by_op = {str(op).split(".")[-1]: n for op, n in counter.get_flop_counts()["Global"].items()}
    return counter.get_total_flops(), by_op


def no_bias(*linears: nn.Linear) -> None:
    for linear in linears:
        linear.bias = None


# Small configurations with the shapes of the real ones: Llama-like (GQA, MQA, MHA), Qwen2-like (q/k/v biases),
# GPT-2-like (biases, LayerNorm, learned positions, tied head), Mixtral-like (MoE)
LLAMA_LIKE = (Model("tiny GQA", 2, 16, 4, 2, 24, 50, True, False, "RMSNorm"),
              Model("tiny MQA", 3, 24, 6, 1, 40, 37, True, False, "RMSNorm"),
              Model("tiny MHA", 1, 32, 8, 8, 48, 64, True, False, "RMSNorm"))
QWEN_LIKE = Model("tiny Qwen", 2, 24, 6, 2, 32, 41, True, False, "RMSNorm", qkv_bias=True)
GPT_LIKE = (Model("tiny GPT a", 2, 16, 4, 4, 64, 50, False, True, tied=True, positions=12),
            Model("tiny GPT b", 3, 24, 3, 3, 96, 29, False, True, tied=True, positions=7),
            Model("tiny GPT c", 1, 8, 2, 2, 20, 11, False, True, tied=True, positions=5))
MOE_LIKE = (Model("tiny MoE a", 2, 16, 4, 2, 24, 50, True, False, "RMSNorm", experts=4, top_k=2),
            Model("tiny MoE b", 1, 24, 6, 3, 16, 33, True, False, "RMSNorm", experts=8, top_k=2),
            Model("tiny MoE c", 3, 8, 2, 1, 12, 19, True, False, "RMSNorm", experts=3, top_k=1))


class TinyDecoder(nn.Module):
    """A decoder-only model of the catalogue's reference parts, wired as Model m says (parameters only)."""

    def __init__(self, m: Model):
        super().__init__()
        norm = ref("rms_norm").RMSNorm if m.norm == "RMSNorm" else ref("layer_norm").LayerNorm
        self.embed = nn.Embedding(m.vocab, m.d_model)
        self.positions = nn.Embedding(m.positions, m.d_model) if m.positions else None
        self.layers = nn.ModuleList()
        for _ in range(m.layers):
            attn = ref("grouped_query_attention").GroupedQueryAttention(m.d_model, m.heads, m.kv_heads)
            if not (m.bias or m.qkv_bias):
                no_bias(attn.W_q, attn.W_k, attn.W_v)
            if not m.bias:
                no_bias(attn.W_o)
            if m.experts:
                ffn = ref("moe").MoE(m.d_model, m.d_ff, m.experts, m.top_k)
            elif m.gated:
                ffn = ref("swiglu").SwiGLU(m.d_model, m.d_ff)
            else:
                ffn = ref("feed_forward").FeedForward(m.d_model, m.d_ff, activation="gelu")
            self.layers.append(nn.ModuleDict({"attn": attn, "ffn": ffn, "norm1": norm(m.d_model), "norm2": norm(m.d_model)}))
        self.norm = norm(m.d_model)
        self.head = nn.Linear(m.d_model, m.vocab, bias=False)
        if m.tied:
            self.head.weight = self.embed.weight


# ----------------------------------------------------------------------------- parameters


@pytest.mark.parametrize("d_model, heads", [(8, 2), (24, 4), (64, 8)])
def test_mha_params_is_the_references_count(d_model, heads):
    mha = ref("multi_head_attention").MultiHeadAttention(d_model, heads)
    assert count(mha) == N.mha_params(d_model, bias=True)
    no_bias(mha.W_q, mha.W_k, mha.W_v, mha.W_o)
    assert count(mha) == N.mha_params(d_model, bias=False) == 4 * d_model**2


@pytest.mark.parametrize("d_model, heads, kv_heads", [(16, 4, 2), (24, 6, 1), (32, 8, 8), (48, 12, 3)])
@pytest.mark.parametrize("qkv_bias, o_bias", [(True, True), (True, False), (False, False)])
def test_gqa_params_is_the_references_count(d_model, heads, kv_heads, qkv_bias, o_bias):
    gqa = ref("grouped_query_attention").GroupedQueryAttention(d_model, heads, kv_heads)
    if not qkv_bias:
        no_bias(gqa.W_q, gqa.W_k, gqa.W_v)
    if not o_bias:
        no_bias(gqa.W_o)
    assert count(gqa) == N.gqa_params(d_model, heads, kv_heads, qkv_bias, o_bias)
    if kv_heads == heads:  # GQA with every head its own K and V is MHA
        assert N.gqa_params(d_model, heads, kv_heads, True, True) == N.mha_params(d_model, True)


@pytest.mark.parametrize("d_model, d_ff", [(8, 32), (24, 40), (64, 256)])
def test_ffn_params_is_the_references_count(d_model, d_ff):
    ffn = ref("feed_forward").FeedForward(d_model, d_ff)
    assert count(ffn) == N.ffn_params(d_model, d_ff, bias=True)
    no_bias(ffn.fc1, ffn.fc2)
    assert count(ffn) == N.ffn_params(d_model, d_ff, bias=False)


@pytest.mark.parametrize("d_model, d_ff", [(8, 24), (16, 40), (48, 128)])
def test_swiglu_params_is_the_references_count(d_model, d_ff):
    assert count(ref("swiglu").SwiGLU(d_model, d_ff)) == N.swiglu_params(d_model, d_ff)


@pytest.mark.parametrize("d_model", [6, 12, 48])
def test_swiglu_of_8d_over_3_holds_the_parameters_of_a_4d_ffn(d_model):
    d_ff = N.swiglu_matching_d_ff(d_model)
    assert d_ff.is_integer()  # d_model a multiple of 3, so that the reference can be built
    ffn = ref("feed_forward").FeedForward(d_model, 4 * d_model)
    no_bias(ffn.fc1, ffn.fc2)
    assert count(ref("swiglu").SwiGLU(d_model, int(d_ff))) == count(ffn)


@pytest.mark.parametrize("layers, d_model", [(1, 8), (2, 16), (5, 12)])
@pytest.mark.parametrize("norm", ["LayerNorm", "RMSNorm"])
def test_model_norm_params_is_the_references_count(layers, d_model, norm):
    module = ref("rms_norm").RMSNorm if norm == "RMSNorm" else ref("layer_norm").LayerNorm
    norms = nn.ModuleList(module(d_model) for _ in range(2 * layers + 1))  # 2 a layer, and the final one
    assert count(norms) == N.model_norm_params(layers, d_model, norm)
    assert count(module(d_model)) == N.norm_params(d_model, norm)


@pytest.mark.parametrize("d_model, heads, d_ff", [(8, 2, 32), (24, 4, 40), (64, 8, 256)])
def test_encoder_and_decoder_layer_params_are_the_references_counts(d_model, heads, d_ff):
    assert count(ref("encoder_layer").EncoderLayer(d_model, heads, d_ff)) == N.encoder_layer_params(d_model, d_ff)
    assert count(ref("decoder_layer").DecoderLayer(d_model, heads, d_ff)) == N.decoder_layer_params(d_model, d_ff)


@pytest.mark.parametrize("vocab, d_model", [(11, 8), (50, 16), (257, 24)])
@pytest.mark.parametrize("tied", [True, False])
def test_embedding_head_params_is_torchs_count(vocab, d_model, tied):
    pair = nn.ModuleDict({"embed": nn.Embedding(vocab, d_model), "head": nn.Linear(d_model, vocab, bias=False)})
    if tied:
        pair["head"].weight = pair["embed"].weight
    assert count(pair) == N.embedding_head_params(vocab, d_model, tied)


@pytest.mark.parametrize("m", LLAMA_LIKE + (QWEN_LIKE,) + GPT_LIKE + MOE_LIKE, ids=lambda m: m.name)
def test_model_params_is_the_count_of_a_model_built_from_the_references(m):
    model = TinyDecoder(m)
    assert count(model) == N.model_params(m)
    assert count(model.layers[0]) == N.layer_params(m)


def test_the_formulas_give_the_published_sizes():
    sizes = {m.name: N.model_params(m) for m in N.MODELS if m.arch == "decoder"}
    assert sizes["Llama 2 7B"] == 6_738_415_616 and sizes["Llama 3 8B"] == 8_030_261_248
    assert sizes["GPT-2 small"] == 124_439_808 and sizes["Mistral 7B"] == 7_241_732_096
    mixtral = next(m for m in N.MODELS if m.name == "Mixtral 8x7B")
    assert round(sizes["Mixtral 8x7B"] / 1e9, 1) == 46.7 and round(N.model_params(mixtral, True) / 1e9, 1) == 12.9


@pytest.mark.parametrize("m", MOE_LIKE, ids=lambda m: m.name)
def test_moe_active_params_are_what_one_token_runs_through_in_the_reference(m):
    model = TinyDecoder(m)
    idle = 0
    for layer in model.layers:
        used = set()
        def ran(mod, inp, out, used=used):  # an expert that got at least one token
            if inp[0].size(0):
                used.add(id(mod))

        hooks = [e.register_forward_hook(ran) for e in layer["ffn"].experts]
        layer["ffn"](torch.randn(1, 1, m.d_model))  # one token
        for h in hooks:
            h.remove()
        assert len(used) == m.top_k
        idle += sum(count(e) for e in layer["ffn"].experts if id(e) not in used)
    assert count(model) - idle == N.model_params(m, active=True)


LORA_MODULES = {"q_proj": ("attn", "W_q"), "k_proj": ("attn", "W_k"), "v_proj": ("attn", "W_v"),
                "o_proj": ("attn", "W_o"), "gate_proj": ("ffn", "W_gate"), "up_proj": ("ffn", "W_up"),
                "down_proj": ("ffn", "W_down")}


@pytest.mark.parametrize("m", LLAMA_LIKE, ids=lambda m: m.name)
@pytest.mark.parametrize("targets", N._LORA_TARGETS, ids=len)
@pytest.mark.parametrize("rank", [1, 4])
def test_lora_params_is_the_trainable_count_of_the_reference_adapters(m, targets, rank):
    model = TinyDecoder(m)
    model.requires_grad_(False)  # the base model is frozen
    for layer in model.layers:
        for name in targets:
            part, attr = LORA_MODULES[name]
            setattr(layer[part], attr, ref("lora").LoRALinear(getattr(layer[part], attr), rank, alpha=2 * rank))
    assert trainable(model) == N.lora_params(rank, N.lora_shapes(m, targets), m.layers)


# ----------------------------------------------------------------------------- FLOPs


@pytest.mark.parametrize("batch, length, d_model, heads", [(1, 5, 8, 2), (2, 7, 24, 4), (3, 16, 32, 8)])
def test_attention_score_flops_is_what_torch_counts_in_the_reference(batch, length, d_model, heads):
    mha = ref("multi_head_attention").MultiHeadAttention(d_model, heads)
    x = torch.randn(batch, length, d_model)
    _, by_op = flops(mha, x, x)
    assert by_op["bmm"] == N.attention_score_flops(batch, length, heads, d_model // heads)  # Q·Kᵀ and A·V
    assert by_op["addmm"] == N.projection_flops(batch, length, d_model, heads, heads)  # the four projections


@pytest.mark.parametrize("batch, length, d_model, heads, kv_heads", [(1, 5, 16, 4, 2), (2, 9, 24, 6, 1),
                                                                     (3, 4, 32, 8, 8)])
def test_projection_flops_is_what_torch_counts_in_the_gqa_reference(batch, length, d_model, heads, kv_heads):
    gqa = ref("grouped_query_attention").GroupedQueryAttention(d_model, heads, kv_heads)
    no_bias(gqa.W_q, gqa.W_k, gqa.W_v, gqa.W_o)
    _, by_op = flops(gqa, torch.randn(batch, length, d_model))
    assert by_op["mm"] == N.projection_flops(batch, length, d_model, heads, kv_heads)
    assert by_op["bmm"] == N.attention_score_flops(batch, length, heads, d_model // heads)  # query heads count


@pytest.mark.parametrize("d_model, heads, kv_heads", [(16, 4, 2), (24, 6, 1), (32, 8, 8)])
def test_at_the_crossover_length_scores_cost_what_projections_cost(d_model, heads, kv_heads):
    gqa = ref("grouped_query_attention").GroupedQueryAttention(d_model, heads, kv_heads)
    length = N.score_projection_crossover(d_model, heads, kv_heads)
    _, by_op = flops(gqa, torch.randn(1, length, d_model))
    assert by_op["bmm"] == by_op["addmm"]
    _, longer = flops(gqa, torch.randn(1, length + 1, d_model))
    assert longer["bmm"] > longer["addmm"]


@pytest.mark.parametrize("batch, length, d_model, d_ff", [(1, 3, 8, 32), (2, 5, 16, 40), (4, 7, 24, 64)])
def test_ffn_flops_is_what_torch_counts_in_the_references(batch, length, d_model, d_ff):
    x = torch.randn(batch, length, d_model)
    assert flops(ref("feed_forward").FeedForward(d_model, d_ff), x)[0] == N.ffn_flops(batch * length, d_model, d_ff,
                                                                                      gated=False)
    assert flops(ref("swiglu").SwiGLU(d_model, d_ff), x)[0] == N.ffn_flops(batch * length, d_model, d_ff, gated=True)


@pytest.mark.parametrize("batch, length, d_model, d_ff, experts, top_k", [(1, 5, 8, 12, 4, 2), (2, 6, 16, 24, 8, 2),
                                                                          (3, 4, 12, 20, 3, 1)])
def test_moe_layer_flops_is_what_torch_counts_in_the_reference(batch, length, d_model, d_ff, experts, top_k):
    torch.manual_seed(0)
    moe = ref("moe").MoE(d_model, d_ff, experts, top_k)
    total, _ = flops(moe, torch.randn(batch, length, d_model))
    assert total == N.moe_layer_flops(batch * length, d_model, d_ff, experts, top_k)


@pytest.mark.parametrize("tokens, d_model, d_ff, depth", [(3, 8, 24, 1), (10, 16, 40, 2), (6, 12, 20, 3)])
def test_training_flops_is_six_n_d_by_torchs_count_of_forward_and_backward(tokens, d_model, d_ff, depth):
    model = nn.Sequential(*(ref("swiglu").SwiGLU(d_model, d_ff) for _ in range(depth)))  # matrices only
    x = torch.randn(tokens, d_model, requires_grad=True)  # its gradient too, as inside a deeper network

    def step():
        model(x).sum().backward()

    assert flops(step)[0] == N.training_flops(count(model), tokens)


# ----------------------------------------------------------------------------- memory

DTYPE_BYTES = [(torch.float32, 4), (torch.bfloat16, 2), (torch.float64, 8)]


@pytest.mark.parametrize("batch, length, d_model, heads", [(1, 5, 8, 2), (2, 7, 24, 4), (3, 16, 32, 8)])
@pytest.mark.parametrize("dtype, nbytes", DTYPE_BYTES)
def test_attention_weights_bytes_is_what_the_reference_returns(batch, length, d_model, heads, dtype, nbytes):
    mha = ref("multi_head_attention").MultiHeadAttention(d_model, heads).to(dtype)
    x = torch.randn(batch, length, d_model, dtype=dtype)
    _, attn = mha(x, x)
    assert attn.nbytes == N.attention_weights_bytes(batch, heads, length, nbytes)


def _mha_cache_bytes(layers, batch, length, d_model, heads, dtype) -> int:
    """The bytes the KV-cache reference holds after a prompt, in every layer."""
    held = 0
    for _ in range(layers):
        layer = ref("kv_cache").CachedSelfAttention(d_model, heads).to(dtype)
        _, k, v = layer(torch.randn(batch, length, d_model, dtype=dtype))
        held += k.nbytes + v.nbytes
    return held


def _gqa_cache_bytes(layers, batch, length, d_model, heads, kv_heads, dtype) -> int:
    """What a GQA cache holds: the K and V the reference computes, before they are repeated for the query heads."""
    held = []
    for _ in range(layers):
        gqa = ref("grouped_query_attention").GroupedQueryAttention(d_model, heads, kv_heads).to(dtype)
        for proj in (gqa.W_k, gqa.W_v):
            proj.register_forward_hook(lambda mod, inp, out: held.append(out.nbytes))
        gqa(torch.randn(batch, length, d_model, dtype=dtype))
    return sum(held)


@pytest.mark.parametrize("layers, batch, length, d_model, heads, kv_heads", [(1, 1, 5, 16, 4, 2),
                                                                             (2, 3, 7, 24, 6, 1),
                                                                             (3, 2, 4, 32, 8, 4)])
@pytest.mark.parametrize("dtype, nbytes", DTYPE_BYTES)
def test_kv_cache_bytes_is_what_the_references_hold(layers, batch, length, d_model, heads, kv_heads, dtype, nbytes):
    d_k = d_model // heads
    mha = _mha_cache_bytes(layers, batch, length, d_model, heads, dtype)
    gqa = _gqa_cache_bytes(layers, batch, length, d_model, heads, kv_heads, dtype)
    assert mha == N.kv_cache_bytes(layers, batch, length, heads, d_k, nbytes)
    assert gqa == N.kv_cache_bytes(layers, batch, length, kv_heads, d_k, nbytes)
    assert mha / gqa == heads / kv_heads  # the saving grows with the group size


@pytest.mark.parametrize("layers, batch, length, d_model, heads, d_latent, d_rope", [(1, 1, 5, 16, 2, 8, 4),
                                                                                     (2, 3, 6, 24, 4, 12, 8),
                                                                                     (3, 2, 4, 32, 8, 16, 2)])
@pytest.mark.parametrize("dtype, nbytes", DTYPE_BYTES)
def test_mla_cache_bytes_is_what_the_reference_caches(layers, batch, length, d_model, heads, d_latent, d_rope, dtype,
                                                      nbytes):
    held = 0
    for _ in range(layers):
        mla = ref("mla").MultiHeadLatentAttention(d_model, heads, d_latent, 8, d_rope, 8).to(dtype)
        _, c_kv, k_rope = mla(torch.randn(batch, length - 1, d_model, dtype=dtype))  # a prompt, then one step
        _, c_kv, k_rope = mla(torch.randn(batch, 1, d_model, dtype=dtype), c_kv, k_rope)
        held += c_kv.nbytes + k_rope.nbytes
    assert held == N.mla_cache_bytes(layers, batch, length, d_latent, d_rope, nbytes)


@pytest.mark.parametrize("m", (LLAMA_LIKE[0], GPT_LIKE[1], MOE_LIKE[0]), ids=lambda m: m.name)
@pytest.mark.parametrize("dtype", [torch.float32, torch.bfloat16, torch.float16, torch.int8])
def test_weights_bytes_is_what_the_model_built_from_the_references_holds(m, dtype):
    model = TinyDecoder(m)
    if dtype.is_floating_point:
        held = sum(p.nbytes for p in model.to(dtype).parameters())
    else:  # an int8 copy of every weight, as a quantised checkpoint stores them (scales aside)
        held = sum(torch.zeros_like(p, dtype=dtype).nbytes for p in model.parameters())
    assert held == N.weights_bytes(N.model_params(m), dtype.itemsize)


def _adamw_state(m: Model, mixed: bool) -> dict[str, int]:
    """Bytes of the weights, gradients and AdamW state after one step, as measured; mixed: bf16 weights and
    gradients for the forward and backward, an fp32 master copy that AdamW updates."""
    torch.manual_seed(0)
    model = TinyDecoder(m)
    master = [p for p in model.parameters()]
    if mixed:
        low = TinyDecoder(m).to(torch.bfloat16)
        low.load_state_dict(model.state_dict())
        working = list(low.parameters())
    else:
        working = master
    loss = sum((p.float() ** 2).sum() for p in working)  # any loss that reaches every weight
    loss.backward()
    if mixed:
        for p, w in zip(master, working):
            p.grad = w.grad.float()
    optimizer = torch.optim.AdamW(master, lr=1e-3)
    optimizer.step()
    states = [t for s in optimizer.state.values() for key, t in s.items() if key in ("exp_avg", "exp_avg_sq")]
    sizes = {"weights": sum(w.nbytes for w in working), "grads": sum(w.grad.nbytes for w in working),
             "states": sum(t.nbytes for t in states)}
    if mixed:  # the fp32 master copy belongs to the optimizer's state
        sizes["states"] += sum(p.nbytes for p in master)
    return sizes


@pytest.mark.parametrize("m", (LLAMA_LIKE[0], GPT_LIKE[0], MOE_LIKE[2]), ids=lambda m: m.name)
@pytest.mark.parametrize("precision", ["fp32", "mixed"])
def test_adamw_bytes_is_what_one_adamw_step_holds(m, precision):
    sizes = _adamw_state(m, precision == "mixed")
    params = N.model_params(m)
    assert sum(sizes.values()) == N.adamw_bytes(params, precision) == 16 * params
    assert sizes["states"] == N.adamw_bytes(params, precision, states_only=True)


@pytest.mark.parametrize("m", (LLAMA_LIKE[0], GPT_LIKE[0], MOE_LIKE[2]), ids=lambda m: m.name)
@pytest.mark.parametrize("stage", [1, 2, 3])
def test_zero_bytes_per_gpu_is_one_ranks_shard_of_the_measured_state(m, stage):
    sizes = _adamw_state(m, mixed=True)
    params = N.model_params(m)
    gpus = next(g for g in (8, 4, 2) if params % g == 0)
    # ZeRO flattens each kind of state and gives every rank an equal slice of the kinds its stage shards
    sharded = {"states": stage >= 1, "grads": stage >= 2, "weights": stage >= 3}
    held = sum(torch.empty(size, dtype=torch.uint8).chunk(gpus)[0].nbytes if sharded[kind] else size
               for kind, size in sizes.items())
    assert held == N.zero_bytes_per_gpu(params, stage, gpus)


# ----------------------------------------------------------------------------- positions


@pytest.mark.parametrize("d_k, base", [(8, 10000.0), (16, 500000.0), (64, 1000000.0)])
@pytest.mark.parametrize("layout", ["interleaved", "half"])
def test_rope_angle_and_wavelength_are_the_references_rotation(d_k, base, layout):
    positions = torch.tensor([1, 3, 100, 4095])
    for pair in range(d_k // 2):
        # a unit vector on the pair's first axis comes out as (cos angle, sin angle)
        x = torch.zeros(1, 1, len(positions), d_k, dtype=torch.float64)
        first, second = (2 * pair, 2 * pair + 1) if layout == "interleaved" else (pair, pair + d_k // 2)
        x[..., first] = 1.0
        out = ref("rope").apply_rope(x, positions, layout, base)[0, 0]
        for row, p in enumerate(positions.tolist()):
            angle = N.rope_angle(p, pair, d_k, base)
            assert out[row, first].item() == pytest.approx(math.cos(angle), abs=1e-9)
            assert out[row, second].item() == pytest.approx(math.sin(angle), abs=1e-9)
        per_step = math.atan2(out[0, second].item(), out[0, first].item())  # the angle at position 1, below π
        assert 2 * math.pi / per_step == pytest.approx(N.rope_wavelength(pair, d_k, base), rel=1e-9)


@pytest.mark.parametrize("d_model", [16, 33, 512])
def test_sinusoidal_pe_is_the_references_table(d_model):
    pe = ref("positional_encoding").PositionalEncoding(d_model, max_len=120).pe[0].double()
    for position in (0, 1, 7, 99):
        for column in range(d_model):
            assert pe[position, column].item() == pytest.approx(N.sinusoidal_pe(position, column, d_model), abs=1e-6)


@pytest.mark.parametrize("heads", [8, 32, 64])
def test_alibi_slope_is_the_references_slope(heads):
    slopes = ref("alibi").alibi_slopes(heads)
    assert [N.alibi_slope(h, heads) for h in range(1, heads + 1)] == pytest.approx(slopes.tolist(), rel=1e-12)


# ----------------------------------------------------------------------------- decoding and post-training


class Scripted(nn.Module):
    """A toy model whose greedy choice after position j is table[j + 1], whatever came before; counts its calls."""

    def __init__(self, table: torch.Tensor, vocab: int):
        super().__init__()
        self.table, self.vocab, self.calls = table, vocab, 0

    def forward(self, ids: torch.Tensor) -> torch.Tensor:
        self.calls += 1
        return F.one_hot(self.table[1:ids.size(1) + 1], self.vocab).float()[None]  # (1, t, V)


@pytest.mark.parametrize("alpha, gamma", [(0.6, 3), (0.8, 4), (0.9, 2)])
def test_speculative_tokens_is_the_mean_of_a_seeded_simulation_of_the_reference(alpha, gamma):
    vocab, new = 5, 2000
    generator = torch.Generator().manual_seed(0)
    truth = torch.randint(vocab, (new + gamma + 3,), generator=generator)  # the target's greedy text
    agrees = torch.rand(len(truth), generator=generator) < alpha  # each draft right with chance alpha
    guess = torch.where(agrees, truth, (truth + 1) % vocab)
    target, draft = Scripted(truth, vocab), Scripted(guess, vocab)
    out = ref("speculative_decoding").speculative_decode(target, draft, [int(truth[0])], new, gamma, eos_id=None)
    assert out == truth[1:new + 1].tolist()  # the target's own greedy text, whatever the draft said
    assert len(out) / target.calls == pytest.approx(N.speculative_tokens(alpha, gamma), rel=0.05)


@pytest.mark.parametrize("chosen, rejected, ref_chosen, ref_rejected, beta", [(-40, -55, -42, -50, 0.1),
                                                                               (-12, -9, -10, -11, 0.5),
                                                                               (-80, -81, -79, -90, 0.05)])
def test_dpo_loss_is_the_references_loss(chosen, rejected, ref_chosen, ref_rejected, beta):
    def tokens(total):  # a response of three tokens whose log-probabilities sum to total, and a padding token
        return torch.tensor([[total / 2, total / 4, total / 4, -7.0]], dtype=torch.float64)

    mask = torch.tensor([[True, True, True, False]])
    loss, _, _ = ref("dpo_loss").dpo_loss(tokens(chosen), tokens(rejected), tokens(ref_chosen), tokens(ref_rejected),
                                          mask, mask, beta)
    assert loss.item() == pytest.approx(N.dpo_loss(chosen, rejected, ref_chosen, ref_rejected, beta), rel=1e-12)


@pytest.mark.parametrize("rewards", [[1, 0, 0, 1], [1, 1, 1, 0, 0, 0, 0, 0], [0.5, 1, 0, 0.2, 0.9, 0.1]])
def test_grpo_advantage_is_the_references_advantage(rewards):
    got = ref("grpo_loss").group_advantages(torch.tensor(rewards * 2, dtype=torch.float64), len(rewards))
    for i in range(len(rewards)):
        assert got[i].item() == pytest.approx(N.grpo_advantage(rewards, i, eps=1e-4), rel=1e-12)
        assert got[i].item() == pytest.approx(N.grpo_advantage(rewards, i), rel=1e-3)  # the eps is negligible


# ----------------------------------------------------------------------------- the generators

MODELS = {m.name: m for m in N.MODELS}
MLA_MODELS = {m.name: m for m in N.MLA_MODELS}
# The numeric questions, read from their own file: a slip in another bank file fails test_bank.py, not these
NUMERIC = [quiz._question(entry) for entry in
           tomllib.loads((quiz.HERE / "bank" / "numeric.toml").read_text(encoding="utf-8"))["question"]]


def _model_params(v):
    return N.model_params(MODELS[v["model"]])


# Each generator's answer, computed again from the values its question shows (and the model it names)
FORMULAS = {
    "gen_mha_params": lambda v: N.mha_params(v["d_model"], True),
    "gen_gqa_params": lambda v: N.gqa_params(v["d_model"], v["heads"], v["kv_heads"]),
    "gen_gqa_kv_saving": lambda v: (N.kv_cache_bytes(v["layers"], v["batch"], v["length"], v["heads"], v["d_k"],
                                                     v["nbytes"])
                                    - N.kv_cache_bytes(v["layers"], v["batch"], v["length"], v["kv_heads"], v["d_k"],
                                                       v["nbytes"])),
    "gen_mla_cache_bytes": lambda v: N.mla_cache_bytes(v["layers"], v["batch"], v["length"], v["d_latent"],
                                                       v["d_rope"], v["nbytes"]),
    "gen_attention_score_flops": lambda v: N.attention_score_flops(v["batch"], v["length"], v["heads"], v["d_k"]),
    "gen_attention_weights_bytes": lambda v: N.attention_weights_bytes(v["batch"], v["heads"], v["length"],
                                                                       v["nbytes"]),
    "gen_score_projection_crossover": lambda v: N.score_projection_crossover(v["d_model"], v["heads"], v["kv_heads"]),
    "gen_ffn_params": lambda v: N.ffn_params(v["d_model"], v["d_ff"]),
    "gen_swiglu_params": lambda v: N.swiglu_params(v["d_model"], v["d_ff"]),
    "gen_swiglu_matching_d_ff": lambda v: N.swiglu_matching_d_ff(v["d_model"]),
    "gen_ffn_flops": lambda v: N.ffn_flops(v["batch"] * v["length"], v["d_model"], v["d_ff"], True),
    "gen_moe_params": lambda v: N.model_params(MODELS[v["model"]], active=v["used"] < v["experts"]),
    "gen_norm_params": lambda v: N.model_norm_params(v["layers"], v["d_model"], v["norm"]),
    "gen_rope_angle": lambda v: N.rope_angle(v["position"], v["pair"], v["d_k"], v["base"]),
    "gen_rope_wavelength": lambda v: N.rope_wavelength(v["pair"], v["d_k"], v["base"]),
    "gen_sinusoidal_pe": lambda v: N.sinusoidal_pe(v["position"], v["column"], v["d_model"]),
    "gen_alibi_slope": lambda v: N.alibi_slope(v["head"], v["heads"]),
    "gen_encoder_layer_params": lambda v: N.encoder_layer_params(v["d_model"], v["d_ff"]),
    "gen_decoder_layer_params": lambda v: N.decoder_layer_params(v["d_model"], v["d_ff"]),
    "gen_embedding_head_params": lambda v: N.embedding_head_params(v["vocab"], v["d_model"],
                                                                   MODELS[v["model"]].tied),
    "gen_llama_params": _model_params,
    "gen_gpt2_params": _model_params,
    "gen_kv_cache_bytes": lambda v: N.kv_cache_bytes(v["layers"], v["batch"], v["length"], v["kv_heads"], v["d_k"],
                                                     v["nbytes"]),
    "gen_projection_flops": lambda v: N.projection_flops(v["batch"], v["length"], v["d_model"], v["heads"],
                                                         v["kv_heads"]),
    "gen_moe_layer_flops": lambda v: N.moe_layer_flops(v["tokens"], v["d_model"], v["d_ff"], v["experts"],
                                                       v["top_k"]),
    "gen_weights_bytes": lambda v: N.weights_bytes(v["params"], v["nbytes"]),
    "gen_speculative_tokens": lambda v: N.speculative_tokens(v["alpha"], v["gamma"]),
    "gen_training_flops": lambda v: N.training_flops(v["params"], v["tokens"]),
    "gen_adamw_bytes": lambda v: v["params"] * v["per_param"],
    "gen_zero_bytes": lambda v: N.zero_bytes_per_gpu(v["params"], v["stage"], v["gpus"]),
    "gen_lora_params": lambda v: N.lora_params(v["rank"], N.lora_shapes(MODELS[v["model"]],
                                                                        tuple(v["targets"].split(", "))),
                                               v["layers"]),
    "gen_dpo_loss": lambda v: N.dpo_loss(v["policy_chosen"], v["policy_rejected"], v["ref_chosen"], v["ref_rejected"],
                                         v["beta"]),
    "gen_grpo_advantage": lambda v: N.grpo_advantage([1.0] * v["right"] + [0.0] * v["wrong"], 0),
}


def test_every_generator_has_one_question_and_a_formula():
    generators = sorted(name for name in dir(N) if name.startswith("gen_"))
    assert sorted(q.generator for q in NUMERIC) == generators  # one question each, none without a generator
    assert all(q.kind == "numeric" for q in NUMERIC) and len({q.id for q in NUMERIC}) == len(NUMERIC)
    assert sorted(FORMULAS) == generators
    assert len(generators) >= 22
    per_topic = {topic: sum(q.topic == topic for q in NUMERIC) for topic in quiz.TOPICS}
    assert all(per_topic.values()), per_topic


def test_the_configurations_are_consistent():
    for m in N.MODELS:
        assert m.d_model % m.heads == 0 and m.heads % m.kv_heads == 0, m.name
        assert m.norm in ("LayerNorm", "RMSNorm") and m.arch in ("decoder", "encoder", "encoder-decoder")
        assert (m.experts == 0) == (m.top_k == 0)


@pytest.mark.parametrize("generator", sorted(FORMULAS))
def test_a_generators_answer_is_its_formula_on_the_values_it_shows(generator):
    for seed in range(40):
        values = getattr(N, generator)(random.Random(seed))
        assert values["answer"] == pytest.approx(FORMULAS[generator](values), rel=1e-12)
        assert values["answer"] > 0 and values["unit"] in ("count", "bytes", "flops", "plain")


def _short_forms(value: float, unit: str) -> list[str]:
    """How a candidate might type the answer: 1.05M, 1.05e6, 105万, 2.5 GiB."""
    forms = [f"{value:.3e}"]
    if unit == "bytes":
        forms += [f"{value / 2**30:.4g} GiB", f"{value / 2**20:.4g}MiB", f"{value / 1e9:.4g} GB"]
    elif value >= 1e4:
        power = min(int(math.log10(value)) // 3, 4)
        forms += [f"{value / 1000**power:.3g}{' KMBT'[power]}", f"{value / 1e4:.4g}万"]
    else:
        forms.append(f"{value:.3g}")
    return forms


@pytest.mark.parametrize("q", NUMERIC, ids=lambda q: q.id)
def test_an_answer_reads_back_through_judge_and_a_factor_of_two_does_not(q):
    for seed in range(1, 13):
        drawn = quiz.draw(q, seed, "en")
        expected = quiz.spelled(drawn.value, drawn.unit)
        assert quiz.judge(drawn, expected.split(" ")[0]).right, expected
        inside = re.search(r"\((?:≈|=) ([^)]+)\)", expected)
        if inside:  # the short form spelled() shows, as typed
            assert quiz.judge(drawn, inside.group(1)).right, expected
        for typed in _short_forms(drawn.value, drawn.unit):
            assert quiz.judge(drawn, typed).right, (typed, drawn.value)
        for wrong in (2 * drawn.value, drawn.value / 2):
            assert not quiz.judge(drawn, f"{wrong:.6g}").right, (wrong, drawn.value)


@pytest.mark.parametrize("q", NUMERIC, ids=lambda q: q.id)
def test_the_explanation_shows_the_answer_and_the_text_does_not(q):
    for seed in range(1, 13):
        for lang in ("en", "zh"):
            drawn = quiz.draw(q, seed, lang)
            values = getattr(N, q.generator)(random.Random(f"{q.id}@{seed}"))
            answer = N.shown(values["answer"])
            assert answer in drawn.explanation, (q.id, lang)
            if len(answer) >= 4:  # a short number may be a config's number too (64, 0.5)
                assert answer not in drawn.text, (q.id, lang, drawn.text)
