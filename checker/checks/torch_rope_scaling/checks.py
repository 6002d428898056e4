"""Hidden checks: RoPE's inverse frequencies under Hugging Face's rope_scaling types, and YaRN's attention factor.

Every case names its type in the name of its factor (linear_factor, dynamic_factor, yarn_factor), so that the
label says it in code. Each head_dim, base and context differs; dynamic NTK is tried beyond the original context
and within it (where it must change nothing); YaRN with the paper's band edges and with others, on a LLaMA base
and on Qwen2's 1e6, so that low and high fall inside the d/2 dimensions and the ramp has a slope; then the edges'
clamps: case 10's fast edge falls below dimension 0, case 11's slow edge (a small base) past d - 1 with the ramp
inside the d/2 dimensions (beta_fast = 4096 puts the fast edge at 2), and case 12's
context of 4 positions puts both edges at 0, where the span of the ramp is 0.001.
"""

import math

import torch

from checker.kit import Fail, Mistake, case, check, expect_raises, expect_structure
from checker.lang import t

TARGET = "rope_inv_freq"
OUTPUTS = [("inv_freq", "(head_dim // 2,)")]
GRADIENTS = False  # the frequencies are computed from the configuration's numbers: nothing to differentiate

CASES = [
    case(1, head_dim=16, base=10000, L=2048, default_rope=1),
    case(2, head_dim=24, base=10000, L=4096, linear_factor=4),
    case(3, head_dim=32, base=500000, L=8192, dynamic_factor=2, seq_len=20000),
    case(4, head_dim=64, base=10000, L=4096, yarn_factor=8, beta_fast=32, beta_slow=1),
    case(5, head_dim=20, base=10000, L=4096, dynamic_factor=4, seq_len=1000),
    case(6, head_dim=48, base=1000000, L=32768, yarn_factor=4, beta_fast=16, beta_slow=2),
    case(7, head_dim=40, base=10000, L=2048, linear_factor=2),
    case(8, head_dim=36, base=10000, L=1024, dynamic_factor=8, seq_len=5000),
    case(10, head_dim=16, base=10000, L=256, yarn_factor=2, beta_fast=64, beta_slow=1),
    case(11, head_dim=12, base=100, L=131072, yarn_factor=4, beta_fast=4096, beta_slow=1),
    case(12, head_dim=16, base=10000, L=4, yarn_factor=2, beta_fast=32, beta_slow=1),
]
TIMING = case(9, head_dim=128, base=10000, L=4096, yarn_factor=16, beta_fast=32, beta_slow=1)

_TYPES = {"default_rope": "default", "linear_factor": "linear", "dynamic_factor": "dynamic", "yarn_factor": "yarn"}


def _type(c):
    """(rope_type, factor) of a case: the type its factor is named after."""
    for name, rope_type in _TYPES.items():
        if name in c.dims:
            return rope_type, float(c.dims[name]) if name != "default_rope" else 1.0
    raise KeyError(c)


def inputs(c, dtype):
    rope_type, factor = _type(c)
    seq_len = c.dims.get("seq_len")
    return (rope_type, c.head_dim, float(c.base), factor, c.L, seq_len, float(c.dims.get("beta_fast", 32)),
            float(c.dims.get("beta_slow", 1)), getattr(torch, dtype))


# ----------------------------------------------------------------------------- named mistakes
# One the error model cannot express: its rewrites drop no floor or ceil (they only trade one for another), and the
# slip drops both at once.


def _yarn_unrounded(rope_type, head_dim, base, factor=1.0, original_max_position_embeddings=2048, seq_len=None,
                    beta_fast=32.0, beta_slow=1.0, dtype=torch.float32):
    """YaRN with its band edges left unrounded (Hugging Face's truncate=False); the other types as the contract."""
    d, L = head_dim, original_max_position_embeddings
    inv_freq = 1.0 / base ** (torch.arange(0, d, 2, dtype=dtype) / d)
    if rope_type != "yarn":
        raise ValueError("this mistake is YaRN's")
    low = max(d * math.log(L / (beta_fast * 2 * math.pi)) / (2 * math.log(base)), 0)
    high = min(d * math.log(L / (beta_slow * 2 * math.pi)) / (2 * math.log(base)), d - 1)
    ramp = ((torch.arange(d // 2, dtype=dtype) - low) / max(high - low, 0.001)).clamp(0, 1)
    return inv_freq / factor * ramp + inv_freq * (1 - ramp)


MISTAKES = [
    Mistake("YaRN's band edges unrounded", _yarn_unrounded,
            "your YaRN band edges are not rounded: the contract, as Hugging Face's default (truncate=True) and YaRN's "
            "code, takes low = floor(...) and high = ceil(...) of the correction dimensions, so the ramp starts and "
            "ends on whole dimensions; unrounded edges are Hugging Face's truncate=False, which only gpt-oss's "
            "configuration asks for"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "rope_inv_freq(rope_type, head_dim, base, factor, original_max_position_embeddings, seq_len, "
                    "beta_fast, beta_slow, dtype) and rope_attention_factor(rope_type, factor) are functions")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["rope_type", "head_dim", "base", "factor",
                                                        "original_max_position_embeddings", "seq_len", "beta_fast",
                                                        "beta_slow", "dtype"])
    expect_structure(kit, "rope_attention_factor", module=False, params=["rope_type", "factor"])


_FACTORS = [("yarn", 8.0), ("yarn", 4.0), ("yarn", 1.0), ("yarn", 32.0), ("linear", 4.0), ("dynamic", 2.0),
            ("default", 1.0)]


@check("numerics", "rope_attention_factor: 0.1 · ln(factor) + 1 for yarn, 1.0 for default, linear and dynamic")
def attention_factor(kit):
    got = tuple(kit.user((rope_type, factor), target="rope_attention_factor") for rope_type, factor in _FACTORS)
    for (rope_type, factor), mine in zip(_FACTORS, got):
        want = kit.reference((rope_type, factor), target="rope_attention_factor")
        if not _same_number(mine, want):
            found = None
            if all(isinstance(x, (int, float)) for x in got):  # the error model, on all the factors at once
                found = kit.name_mistake(None, got, target="rope_attention_factor", run=_factors_of, same=_same_numbers)
            raise Fail(t("rope_attention_factor({rope_type!r}, {factor}) returned {got}; expected {want:.6g}",
                         rope_type=rope_type, factor=factor, got=repr(mine), want=want),
                       found or t("the attention factor scales cos and sin: YaRN's is 0.1 · ln(factor) + 1, with the "
                                  "natural log (math.log), 1 at factor 1; linear and dynamic NTK change the frequencies "
                                  "alone, their factor is 1.0; return it as a Python float"))


def _same_number(a, b) -> bool:
    return isinstance(a, (int, float)) and not isinstance(a, bool) and math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


def _same_numbers(mine, theirs) -> bool:
    return len(mine) == len(theirs) and all(_same_number(a, b) for a, b in zip(mine, theirs))


def _factors_of(mistake):
    """A rewrite of rope_attention_factor (or a named mistake) on every (rope_type, factor) the check asks."""
    return tuple(mistake.impl(rope_type, factor) for rope_type, factor in _FACTORS)


@check("properties", "an unknown rope_type raises ValueError in rope_inv_freq and rope_attention_factor")
def unknown_type(kit):
    expect_raises([("rope_inv_freq('ntk', 16, 10000.0, 2.0)",
                    lambda: kit.user(("ntk", 16, 10000.0, 2.0)), "rope_inv_freq"),
                   ("rope_attention_factor('longrope', 2.0)",
                    lambda: kit.user(("longrope", 2.0), target="rope_attention_factor"), "rope_attention_factor")],
                  t("a misspelled rope_type would silently give unscaled RoPE, and the model would read positions "
                    "past its context as garbage"))


@check("properties", "the defaults: factor=1.0, original_max_position_embeddings=2048, seq_len=None, beta_fast=32, "
                     "beta_slow=1, dtype=torch.float32")
def defaults(kit):
    for args in (("yarn", 64, 10000.0, 8.0), ("dynamic", 32, 10000.0, 4.0), ("linear", 16, 10000.0)):
        full = args + (1.0, 2048, None, 32.0, 1.0, torch.float32)[len(args) - 3:]  # the rest at the defaults
        want = kit.reference(args)
        if not _close(kit.user(full), want):
            continue  # wrong with every argument given: the numerics checks say how
        got = kit.user(args)
        if not _close(got, want):
            raise Fail(t("{call} gave {got}; expected {want} (float32), as your code gives when every argument is "
                         "passed", call=f"rope_inv_freq{args!r}", got=_short(got), want=_short(want)),
                       t("a default differs from the contract's: factor=1.0, original_max_position_embeddings=2048, "
                         "seq_len=None, beta_fast=32.0, beta_slow=1.0 (YaRN's paper), dtype=torch.float32"))


def _close(got, want):
    return isinstance(got, torch.Tensor) and got.dtype == want.dtype and got.shape == want.shape \
        and torch.allclose(got, want, rtol=1e-5, atol=0)


def _short(x):
    if isinstance(x, torch.Tensor):
        return f"{x.dtype} {[round(v, 6) for v in x[:3].tolist()]}..."
    return repr(x)
