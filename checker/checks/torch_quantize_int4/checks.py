"""Hidden checks: GPTQ's asymmetric group-wise int4, packed two levels to a byte, unpacked and dequantised."""

import torch

from checker.kit import (Convention, Fail, Mistake, UserError, case, check, compare, dtype_diagnosis, expect_raises,
                         expect_structure)
from checker.lang import t

TARGET = "quantize_int4"
OUTPUTS = [("q", "(N, K)"), ("scale", "(N, G)"), ("zero", "(N, G)")]
GRADIENTS = False  # q is uint8 and round() has no useful gradient

# Every dimension its own size, G = K // group_size too. Rows as a model's weights are (0.02·randn); a case of exact
# ties (each group's step is 1/4 and its minimum -a/4 with a = 0.5, 1.5, 2.5 or 6.5, so W / scale and -min / scale
# land on k + 0.5, and round(W / scale) + zero reaches 16 where only the clamp keeps it at 15); a case whose groups are
# all positive, all negative or mixed (where stretching the range to hold 0 matters); and one group per row.
CASES = [
    case(1, N=4, K=48, group_size=16, rows="weights: 0.02·randn"),
    case(2, N=3, K=40, group_size=8, rows="ties: step 1/4, min -a/4"),
    case(3, N=5, K=36, group_size=12, rows="groups all positive, all negative or mixed"),
    case(4, N=2, K=30, group_size=30, rows="randn with one outlier per row"),
]
TIMING = case(5, N=1024, K=1024, group_size=128, rows="weights: 0.02·randn")


def _weights(c, g):
    G = c.K // c.group_size
    if c.rows.startswith("weights"):
        return 0.02 * torch.randn(c.N, c.K, generator=g, dtype=torch.float64)
    if c.rows.startswith("ties"):
        a = torch.tensor([0.5, 1.5, 2.5, 6.5], dtype=torch.float64)[torch.randint(0, 4, (c.N, G, 1), generator=g)]
        halves = torch.randint(0, 31, (c.N, G, c.group_size), generator=g).to(torch.float64) / 2  # 0, 0.5, ..., 15
        halves[:, :, 0], halves[:, :, 1] = 0.0, 15.0  # the group's min and max: its step is exactly 1/4
        return ((halves - a) / 4).reshape(c.N, c.K)
    if c.rows.startswith("groups"):
        W = torch.randn(c.N, G, c.group_size, generator=g, dtype=torch.float64)
        sign = torch.randint(0, 3, (c.N, G, 1), generator=g)
        W = torch.where(sign == 0, W.abs() + 1.2, torch.where(sign == 1, -W.abs() - 1.2, W))  # beyond ±1 too
        W[0, 0], W[0, -1] = W[0, 0].abs() + 1.2, -W[0, -1].abs() - 1.2  # one of each, whatever the draw
        return W.reshape(c.N, c.K)
    W = torch.randn(c.N, c.K, generator=g, dtype=torch.float64)
    W[torch.arange(c.N), torch.randint(0, c.K, (c.N,), generator=g)] = 12.0 * torch.randn(c.N, generator=g,
                                                                                           dtype=torch.float64)
    return W


def inputs(c, dtype):
    return _weights(c, c.generator(salt=1)).to(getattr(torch, dtype)), c.group_size


# pack_int4 / unpack_int4 / dequantize_int4: levels over all 16 values, scales and zero points of GPTQ's kind.
_PACK_CASES = [case(11, N=3, K=10), case(12, N=5, K=32)]
_DEQUANT_CASES = [case(21, N=4, K=24, group_size=8), case(22, N=2, K=30, group_size=6)]


def _levels(c, g):
    return torch.randint(0, 16, (c.N, c.K), generator=g).to(torch.uint8)


def _pack_inputs(c):
    return (_levels(c, c.generator(salt=2)),)


def _unpack_inputs(c):
    return (torch.randint(0, 256, (c.N, c.K // 2), generator=c.generator(salt=3)).to(torch.uint8),)


def _dequant_inputs(c, dtype):
    g = c.generator(salt=4)
    G = c.K // c.group_size
    scale = (0.001 + 0.01 * torch.rand(c.N, G, generator=g, dtype=torch.float64)).to(getattr(torch, dtype))
    zero = torch.randint(0, 16, (c.N, G), generator=g).to(scale.dtype)
    return _levels(c, g), scale, zero, c.group_size


# ----------------------------------------------------------------------------- the contract's other reading


def _awq(W, group_size=128):
    """llm-awq's pseudo_quantize_tensor (zero_point=True, n_bit=4): the group's own [min, max], not stretched to hold
    0, the zero point clamped to [0, 15]."""
    N, K = W.shape
    groups = W.reshape(N, K // group_size, group_size)
    max_val, min_val = groups.amax(dim=2), groups.amin(dim=2)
    scales = (max_val - min_val).clamp(min=1e-5) / 15
    zeros = (-torch.round(min_val / scales)).clamp(0, 15)
    q = torch.clamp(torch.round(groups / scales[:, :, None]) + zeros[:, :, None], 0, 15)
    return q.reshape(N, K).to(torch.uint8), scales, zeros


CONVENTIONS = (
    Convention("AWQ's range, not stretched to hold 0", (
        "your range is each group's own [min, max], with the zero point clamped to [0, 15], as llm-awq's "
        "pseudo_quantize_tensor computes it and as the contract's formula can be read. This kata's reference, GPTQ's "
        "quantizer, first stretches the range to hold 0 (min(x.min(), 0), max(x.max(), 0)): in a group whose values "
        "are all positive, AWQ's zero point -min / scale is negative and clamps to 0, so the top of the range clips "
        "at 15, while GPTQ's range keeps every value and makes 0 exact. AWQ's reading was allowed for every later "
        "check"), impl=_awq),
)

# ----------------------------------------------------------------------------- named mistakes
# Two the error model cannot write: the nibble order swaps two slices at once, and the error model has no rewrite
# that drops a round().


def _high_first(q):
    return (q[:, 0::2] << 4) | q[:, 1::2]


def _zero_unrounded(W, group_size=128):
    N, K = W.shape
    groups = W.reshape(N, K // group_size, group_size)
    xmin, xmax = groups.amin(dim=2).clamp(max=0), groups.amax(dim=2).clamp(min=0)
    empty = (xmin == 0) & (xmax == 0)
    xmin, xmax = torch.where(empty, -1.0, xmin), torch.where(empty, 1.0, xmax)
    scale = (xmax - xmin) / 15
    zero = (-xmin / scale).clamp(0, 15)
    q = (torch.round(groups / scale[:, :, None]) + zero[:, :, None]).clamp(0, 15)
    return q.reshape(N, K).to(torch.uint8), scale, zero


MISTAKES = [
    Mistake("the first column in the high nibble", _high_first,
            "your bytes hold column 2j in the HIGH nibble and column 2j + 1 in the low one (torchao's pack_uint4 "
            "order, data[::2] << 4 | data[1::2]): the contract packs as AutoGPTQ does, the first value in the lowest "
            "bits, byte = q[:, 0::2] | (q[:, 1::2] << 4). Both orders round-trip through their own unpack, which is "
            "why this slip only shows when a kernel written for the other order reads the bytes"),
    Mistake("zero point not rounded", _zero_unrounded,
            "your zero point is -min / scale as it is, a fraction: GPTQ rounds it, zero = round(-min / scale), so that "
            "it is one of the 16 levels, stored in 4 bits like q, and the real 0 is exactly representable (padding "
            "and ReLU zeros come back as 0)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "quantize_int4(W, group_size), pack_int4(q), unpack_int4(packed) and dequantize_int4(q, scale, "
                    "zero, group_size) are functions")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["W", "group_size"])
    expect_structure(kit, "pack_int4", module=False, params=["q"])
    expect_structure(kit, "unpack_int4", module=False, params=["packed"])
    expect_structure(kit, "dequantize_int4", module=False, params=["q", "scale", "zero", "group_size"])


def _judged(kit, args, got, want, what, legend, target, dtype="float64"):
    """compare, and on a difference the named mistake or the error model's change, on these inputs."""
    try:
        compare(got, want, what, legend)
    except Fail as fail:
        found = None
        if isinstance(got, torch.Tensor) and tuple(got.shape) == tuple(want.shape) and got.dtype == want.dtype:
            found = kit.name_mistake(args, got, tol=kit.tolerance(dtype), target=target)
        elif fail.general and isinstance(got, torch.Tensor):
            found = dtype_diagnosis(got, want)
        raise Fail(fail.message, found) from None


@check("numerics", "pack_int4: column 2j in the low nibble, column 2j + 1 in the high nibble, as uint8")
def pack(kit):
    for c in _PACK_CASES:
        args = _pack_inputs(c)
        try:
            _judged(kit, args, kit.user(args, target="pack_int4"), kit.reference(args, target="pack_int4"),
                    "packed", "(N, K / 2)", "pack_int4")
        except Fail as fail:
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message), fail.diagnosis) from None


@check("numerics", "unpack_int4: every byte back to its two levels, low nibble first, as uint8")
def unpack(kit):
    for c in _PACK_CASES:
        args = _unpack_inputs(c)
        try:
            _judged(kit, args, kit.user(args, target="unpack_int4"), kit.reference(args, target="unpack_int4"),
                    "q", "(N, K)", "unpack_int4")
        except Fail as fail:
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message), fail.diagnosis) from None


@check("numerics", "dequantize_int4: (q - zero) · scale group by group, in scale's dtype (float64 and float32)")
def dequantize(kit):
    for dtype in ("float64", "float32"):
        for c in _DEQUANT_CASES:
            args = _dequant_inputs(c, dtype)
            try:
                _judged(kit, args, kit.user(args, target="dequantize_int4"),
                        kit.reference(args, target="dequantize_int4"), "dequantized W", "(N, K)", "dequantize_int4",
                        dtype)
            except Fail as fail:
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail.message),
                           fail.diagnosis) from None


def _zero_group_inputs():
    c = CASES[0]
    W, group_size = inputs(c, "float64")
    W[1, :group_size] = 0.0  # row 1's first group
    W[3, -group_size:] = 0.0  # row 3's last group
    return c, W, group_size


def _user_triple(kit, args):
    got = kit.user(args)
    if not isinstance(got, (tuple, list)) or len(got) != 3 or not all(isinstance(v, torch.Tensor) for v in got):
        return None  # the shapes check reports it
    return got


def _right_without_zeros(kit) -> bool:
    """The user's quantize_int4 is right on the case the zero groups are cut into: else the numerics checks say what
    is wrong, not a question about a group of zeros."""
    args = inputs(CASES[0], "float64")
    got = _user_triple(kit, args)
    return got is not None and all(isinstance(u, torch.Tensor) and u.shape == w.shape and u.dtype == w.dtype
                                   and bool(torch.isclose(u.double(), w.double(), rtol=1e-9, atol=1e-12).all())
                                   for u, w in zip(got, kit.reference(args)))


@check("numerics", "a group of zeros gets a finite positive scale and a whole zero point in [0, 15], no NaN, and "
                   "dequantises to 0")
def zero_groups(kit):
    if not _right_without_zeros(kit):
        return  # wrong without a group of zeros too: the numerics checks report it
    c, W, group_size = _zero_group_inputs()
    got = _user_triple(kit, (W, group_size))
    G = c.K // group_size
    if got is None or tuple(got[0].shape) != (c.N, c.K) or any(tuple(v.shape) != (c.N, G) for v in got[1:]):
        return  # the shapes check reports it
    q, scale, zero = got
    for n, g in ((1, 0), (3, G - 1)):
        s, z = scale[n, g].item(), zero[n, g].item()
        levels = q[n, g * group_size:(g + 1) * group_size].to(torch.float64)
        if not (s > 0 and s < float("inf")) or z != round(z) or not 0 <= z <= 15 or bool((levels != z).any()):
            raise Fail(t("{label}, the group {g} of row {n} all zero: got scale {scale}, zero {zero} and q {q}",
                         label=c.label, g=g, n=n, scale=s, zero=z, q=levels.to(torch.int64).tolist()[:6]),
                       t("a group of zeros has min = max = 0, so (max - min) / 15 is 0 and W / scale is 0 / 0 = NaN: "
                         "give it a range that is not empty, as GPTQ does (min = -1, max = 1 where both are 0); then "
                         "every q is the zero point and the group dequantises to 0"))
    try:
        back = kit.user((q, scale, zero, group_size), target="dequantize_int4")
    except UserError:
        return  # the dequantize check reports it
    if isinstance(back, torch.Tensor) and tuple(back.shape) == (c.N, c.K) and \
            not bool((back[1, :group_size] == 0).all()):
        raise Fail(t("{label}: the first group of row 1 is all zero, but dequantize_int4 gives {row}", label=c.label,
                     row=back[1, :group_size].tolist()[:6]))


@check("numerics", "a group of zeros gets GPTQ's range [-1, 1]: scale 2/15 and zero point 8", followup=True)
def zero_groups_gptq(kit):
    if not _right_without_zeros(kit):
        return  # wrong without a group of zeros too: the numerics checks report it
    c, W, group_size = _zero_group_inputs()
    got = _user_triple(kit, (W, group_size))
    if got is None or tuple(got[1].shape) != (c.N, c.K // group_size):
        return  # the shapes check reports it
    s, z = got[1][1, 0].item(), got[2][1, 0].item()
    if abs(s - 2 / 15) > 1e-12 or z != 8:
        raise Fail(t("{label}: a group of zeros got scale {scale} and zero point {zero}. Follow-up: any positive "
                     "scale with q = zero dequantises the group to 0, so why does GPTQ pick [-1, 1] (scale 2/15, "
                     "zero point round(7.5) = 8)? Its quantizer widens every empty range the same way, so that the "
                     "scale is never 0 and nothing divides by it; torchao clamps the scale to eps, AWQ the range "
                     "to 1e-5 instead", label=c.label, scale=s, zero=z))


@check("properties", "unpack_int4(pack_int4(q)) gives q back, for the levels quantize_int4 makes")
def round_trip(kit):
    for c in (CASES[0], CASES[2]):
        got = _user_triple(kit, inputs(c, "float64"))
        if got is None or tuple(got[0].shape) != (c.N, c.K) or got[0].dtype != torch.uint8:
            return  # the shapes and numerics checks report it
        q = got[0]
        again = kit.user((kit.user((q,), target="pack_int4"),), target="unpack_int4")
        if not isinstance(again, torch.Tensor) or not torch.equal(again, q):
            raise Fail(t("{label}: unpack_int4(pack_int4(q)) is not q", label=c.label),
                       t("pack_int4 and unpack_int4 must be each other's inverse: the even column in the low nibble "
                         "(byte & 15 or byte - 16 · (byte // 16)), the odd column in the high nibble (byte >> 4), "
                         "interleaved back in column order"))


@check("properties", "quantize_int4 and dequantize_int4 raise ValueError when group_size does not divide K, "
                     "pack_int4 when K is odd")
def value_errors(kit):
    W, _ = inputs(CASES[0], "float64")  # K = 48
    q = _levels(_PACK_CASES[0], torch.Generator().manual_seed(5))[:, :7]  # K = 7
    scale = torch.ones(4, 5, dtype=torch.float64)
    expect_raises([("quantize_int4(W, group_size=20) with K = 48", lambda: kit.user((W, 20))),
                   ("dequantize_int4(q, scale, zero, group_size=10) with K = 48",
                    lambda: kit.user((torch.zeros(4, 48, dtype=torch.uint8), scale, scale, 10),
                                     target="dequantize_int4")),
                   ("pack_int4(q) with K = 7", lambda: kit.user((q,), target="pack_int4"))],
                  t("a group size that does not divide K leaves a ragged last group, which a reshape into groups "
                    "cannot hold and a slice would silently drop or mix; an odd K leaves a nibble without a partner"))


@check("hygiene", "pack_int4, unpack_int4 and dequantize_int4 leave the caller's tensors unchanged")
def hygiene_others(kit):
    for target, args in (("pack_int4", _pack_inputs(_PACK_CASES[1])), ("unpack_int4", _unpack_inputs(_PACK_CASES[1])),
                         ("dequantize_int4", _dequant_inputs(_DEQUANT_CASES[0], "float64"))):
        _, after = kit.user(args, target=target, return_args=True)
        for i, (before, now) in enumerate(zip(args, after)):
            if isinstance(before, torch.Tensor):
                try:
                    compare(now, before, t("argument {number}", number=i + 1), exact=True)
                except Fail as fail:
                    raise Fail(t("{target} modified its input ({fail})", target=target, fail=fail.message),
                               t("an in-place operation (x += ..., masked_fill_, x[...] = ...) writes into the caller's "
                                 "tensor: compute a new one instead (x = x + ..., masked_fill)")) from None
