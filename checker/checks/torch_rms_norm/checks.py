"""Hidden checks: RMSNorm (LLaMA) from scratch."""

import torch
from torch import nn

from checker.kit import FLOAT32_INSIDE, Convention, Fail, Mistake, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "RMSNorm"
HALF = True  # the stub: the result keeps x's dtype, half precision too
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]

# Every dimension its own size; inputs of rank 3, 2 and 4 (a hard-coded axis fails); the default
# eps once (init without eps); an eps comparable to mean(x²) once (case 2: mean(x²) ≈ 0.012, eps
# 0.01), so eps's place in the formula, and whether the argument is honoured, move the result by
# percents. Every row has mean 0.5 or 0.05, so subtracting the mean (LayerNorm) changes it.
# Case 1 has small rows too (mean(x²) ≈ 0.012): the default eps 1e-6 and a wrong 1e-5 then differ by
# ~4e-4 relative, beyond the tolerance of float32 internals (FLOAT32_INSIDE), so accepting them
# never accepts a wrong default (checker/checks/torch_rms_norm/test_reference.py holds every mistake to that).
CASES = [
    case(1, B=2, T=5, D=8, eps="default", rows="small: 0.1·randn + 0.05"),
    case(2, T=7, D=6, eps=1e-2, rows="small: 0.1·randn + 0.05, mean(x²) close to eps"),
    case(3, B=2, H=3, T=4, D=10, eps=1e-5, rows="normal, and x[1, 2, 3] all zeros"),
    case(4, B=3, T=4, D=5, eps=1e-4, rows="normal: 2·randn + 0.5"),
]
TIMING = case(5, B=16, T=128, D=256, eps=1e-6, rows="normal: 2·randn + 0.5")
_ZERO_AT = (1, 2, 3)  # an all-zero vector in case 3: 0 / sqrt(0 + eps) = 0 exactly
# float16 with entries of size ~300: x² reaches 9e4, beyond float16's largest value 65504.
_HALF = case(6, B=2, T=3, D=16, eps=1e-6, rows="large: 300·randn, in float16")
# Both roundings to float16 (of the normalised vector, then of its product with the weight) are
# 2^-11 ≈ 4.9e-4 relative each; 4e-3 leaves room, while overflow gives zeros or NaN.
_HALF_TOL = (4e-3, 1e-3)


def init(c):
    return {"d_model": c.D} if c.eps == "default" else {"d_model": c.D, "eps": c.eps}


def _rows(c):
    g = c.generator()
    shape = [c.dims[k] for k in ("B", "H", "T") if k in c.dims] + [c.D]
    z = torch.randn(shape, generator=g, dtype=torch.float64)
    kind = c.rows.split(":")[0].split(",")[0]
    x = {"normal": 2 * z + 0.5, "small": 0.1 * z + 0.05, "large": 300 * z}[kind]
    if "zeros" in c.rows:
        x[_ZERO_AT] = 0.0
    return x


def inputs(c, dtype):
    return (_rows(c).to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


def normalise(x, weight, eps, *, stat="mean square", eps_at="inside", dims=(-1,), scale=True, root=True,
              compute=None):
    """RMSNorm with knobs; every knob at its default gives the right answer."""
    h = x if compute is None else x.to(compute)
    if stat == "mean square":
        s = h.pow(2).mean(dim=dims, keepdim=True)
    elif stat == "sum of squares":
        s = h.pow(2).sum(dim=dims, keepdim=True)
    elif stat == "variance":
        s = h.var(dim=dims, keepdim=True, unbiased=False)
    elif stat == "mean":
        s = h.mean(dim=dims, keepdim=True)
    elif stat == "unbiased variance":
        s = h.var(dim=dims, keepdim=True)
    else:  # "centred": LayerNorm without beta
        h = h - h.mean(dim=dims, keepdim=True)
        s = h.pow(2).mean(dim=dims, keepdim=True)
    if not root:
        y = h / (s + eps)
    elif eps_at == "inside":
        y = h / torch.sqrt(s + eps)
    elif eps_at == "outside":
        y = h / (torch.sqrt(s) + eps)
    elif eps_at == "after rsqrt":
        y = h * (torch.rsqrt(s) + eps)
    else:  # "none"
        y = h / torch.sqrt(s)
    return (y * weight if scale else y).to(x.dtype) if compute == "cast back" else (y * weight if scale else y)


def _variant(default_eps=1e-6, fixed_eps=None, cast_back=True, one_plus=False, **knobs):
    class Wrong(nn.Module):
        def __init__(self, d_model, eps=default_eps):
            super().__init__()
            self.eps = eps if fixed_eps is None else fixed_eps
            self.weight = nn.Parameter(torch.ones(d_model))

        def forward(self, x):
            weight = 1 + self.weight if one_plus else self.weight
            y = normalise(x, weight.to(knobs.get("compute") or x.dtype), self.eps, **knobs)
            return y.to(x.dtype) if cast_back else y

    return Wrong


MISTAKES = [
    Mistake("eps outside the root", _variant(eps_at="outside"),
            "your output equals x / (sqrt(mean(x²)) + eps), with eps outside the square root: use "
            "x / torch.sqrt(x.pow(2).mean(-1, keepdim=True) + eps), or x * torch.rsqrt(... + eps), as LLaMA does"),
    Mistake("eps added after rsqrt", _variant(eps_at="after rsqrt"),
            "your output is x · (rsqrt(mean(x²)) + eps): eps belongs inside the root, x · rsqrt(mean(x²) + eps), "
            "where it keeps an all-zero vector finite"),
    Mistake("scale 1 + weight", _variant(one_plus=True),
            "your output is scaled by 1 + weight (Gemma's RMSNorm, whose weight starts at 0): this kata's weight "
            "starts at ones and scales directly, x_hat * weight"),
    Mistake("mean subtracted", _variant(stat="centred"),
            "your output equals (x - mean) / sqrt(var + eps) * weight: that is LayerNorm (without beta). RMSNorm "
            "subtracts no mean: x / sqrt(mean(x²) + eps) * weight"),
    Mistake("sum instead of mean", _variant(stat="sum of squares"),
            "your output equals x / sqrt(sum(x²) + eps): that is x / ‖x‖, too small by √D. Take the MEAN of the "
            "squares, x.pow(2).mean(-1, keepdim=True)"),
    Mistake("std instead of rms", _variant(stat="variance"),
            "your output divides by sqrt(var(x) + eps), the standard deviation (which subtracts the mean inside): "
            "RMSNorm divides by the root mean square, sqrt(mean(x²) + eps)"),
    Mistake("unbiased std instead of rms", _variant(stat="unbiased variance"),
            "your output divides by the unbiased standard deviation (x.var() / x.std() divide by D - 1 around the "
            "mean): RMSNorm divides by the root mean square, sqrt(x.pow(2).mean(-1, keepdim=True) + eps)"),
    Mistake("no square root", _variant(root=False),
            "your output equals x / (mean(x²) + eps), without the square root: divide by "
            "torch.sqrt(mean(x²) + eps) (or multiply by torch.rsqrt)"),
    Mistake("default eps 1e-5", _variant(default_eps=1e-5),
            "your output equals RMSNorm with eps=1e-5 where the default eps=1e-6 applies: the default here is 1e-6, "
            "as in LLaMA's RMSNorm and HF's LlamaRMSNorm (1e-5 is nn.LayerNorm's default)"),
    Mistake("float32, never cast back", _variant(compute=torch.float32, cast_back=False),
            "your output is float32 for a float64 input: x.float() upcasts, but the result must come back in x's "
            "dtype (.to(x.dtype) or .type_as(x)), and float64 should not be downcast at all"),
    Mistake("mean instead of mean square", _variant(stat="mean"),
            "your output divides by sqrt(mean(x) + eps), the mean of x itself (NaN where it is negative): the "
            "statistic is the mean of the SQUARES, x.pow(2).mean(-1, keepdim=True)"),
]


class _LlamaRMSNorm(nn.Module):
    """Hugging Face's LlamaRMSNorm, names adapted: float32 inside whatever the input, x's dtype out."""

    def __init__(self, d_model, eps=1e-6):
        super().__init__()
        self.weight = nn.Parameter(torch.ones(d_model))
        self.variance_epsilon = eps

    def forward(self, hidden_states):
        input_dtype = hidden_states.dtype
        hidden_states = hidden_states.to(torch.float32)
        variance = hidden_states.pow(2).mean(-1, keepdim=True)
        hidden_states = hidden_states * torch.rsqrt(variance + self.variance_epsilon)
        return self.weight * hidden_states.to(input_dtype)


# HF's x.to(torch.float32) (Meta's x.float()) computes a float64 input in float32: right to ~1e-7, and
# what LLaMA's own code does, so it passes as a variant; every formula mistake stays outside
# FLOAT32_INSIDE on some case, with float32 internals or without (checker/checks/torch_rms_norm/test_reference.py).
CONVENTIONS = (
    Convention("float32 internals (HF LlamaRMSNorm)", (
        "your float64 output is right to float32's precision (~1e-7), not float64's: the "
        "mean square is computed in float32, as Hugging Face's LlamaRMSNorm (hidden_states.to(torch.float32)) "
        "and Meta's LLaMA (x.float()) do. This kata's reference upcasts to AT LEAST float32, "
        "x.to(torch.promote_types(x.dtype, torch.float32)), so float64 stays float64; float32 internals were "
        "allowed for every later check"), impl=_LlamaRMSNorm, tol=FLOAT32_INSIDE),
)


# ----------------------------------------------------------------------------- checks


@check("structure", "RMSNorm is an nn.Module with one parameter, weight (D,)")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["d_model", "eps"], forward=["x"], init={"d_model": 6})


@check("structure", "weight starts at ones")
def initial_values(kit):
    state = kit.user((), init={"d_model": 6}, method="state_dict")  # a fresh module, no weights loaded
    got = state.get("weight") if isinstance(state, dict) else None
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (6,):
        raise Fail(t("RMSNorm(6).state_dict() has no weight of shape (6,)"))
    if not torch.equal(got, torch.ones(6, dtype=got.dtype)):
        raise Fail(t("a fresh RMSNorm(6) has weight = {got}: weight starts at ones (torch.ones(d_model)), so that a "
                     "new RMSNorm only normalises", got=[round(v, 3) for v in got.tolist()]))


@check("numerics", "an all-zero vector gives exactly zeros, not NaN")
def zero_vector(kit):
    c = CASES[2]
    for dtype in ("float64", "float32"):
        got = kit.user(kit.inputs(c, dtype), case=c, dtype=dtype)
        want = kit.reference(kit.inputs(c, dtype), case=c, dtype=dtype)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape or got.dtype != want.dtype:
            compare(got, want, t("{label}: output", label=c.label), "(..., D)")  # says what is wrong with its kind, shape or dtype
        row = got[_ZERO_AT]
        if not torch.isfinite(row).all():
            raise Fail(t("{label}, {dtype}: x{at} is all zeros and came out {row}...: divide by "
                         "torch.sqrt(mean(x²) + eps), eps inside the root, so 0 / sqrt(eps) = 0", label=c.label,
                         dtype=dtype, at=list(_ZERO_AT), row=[round(v, 3) for v in row.tolist()[:3]]))
        if not torch.equal(row, torch.zeros_like(row)):
            raise Fail(t("{label}, {dtype}: x{at} is all zeros, so the output should be zeros, got {row}...: RMSNorm "
                         "has no bias and subtracts nothing", label=c.label, dtype=dtype, at=list(_ZERO_AT),
                         row=[round(v, 4) for v in row.tolist()[:3]]))


@check("numerics", "float16 input with entries of size 300: mean(x²) in float32, no overflow, float16 out")
def half_precision(kit):
    c = _HALF
    x16 = _rows(c).half()
    state = {k: v.half() for k, v in kit.state(c, "float64").items()}
    got = kit.user((x16,), init=init(c), state=state, dtype="float16")
    # the exact answer for these float16 inputs and weights, rounded once to float16
    exact = kit.reference((x16.double(),), init=init(c), state={k: v.double() for k, v in state.items()}).half()
    if isinstance(got, torch.Tensor) and got.shape == exact.shape and got.dtype == torch.float32:
        raise Fail(t("{label}: float16 in gave float32 out", label=c.label),
                   t("your code returns the upcast result: upcast for the computation, then return x's dtype "
                     "(.to(x.dtype) or .type_as(x)), as nn.RMSNorm and LLaMA do"))
    if isinstance(got, torch.Tensor) and got.shape == exact.shape and got.dtype == exact.dtype:
        if not torch.isfinite(got).all() or (got == 0).all(dim=-1).any():
            # overflow is the cause only if the same rows come out right in float64
            wide = (x16.double(),), {k: v.double() for k, v in state.items()}
            right = matches(kit.user(wide[0], init=init(c), state=wide[1]), exact.double(), _HALF_TOL)
            raise Fail(t("{label}: some outputs are 0, inf or NaN", label=c.label),
                       t("x² of 300 is 90000, beyond float16's largest value 65504, so your mean(x²) overflows: compute "
                         "it in float32, h = x.float() (or x.to(torch.promote_types(x.dtype, torch.float32))), and cast "
                         "the result back to x.dtype (LLaMA: self._norm(x.float()).type_as(x))") if right else None)
    compare(got, exact, t("{label}: output", label=c.label), "(..., D)", tol=_HALF_TOL)
