"""Hidden checks: sliding-window attention and its mask.

TARGET (sliding_window_attention) goes through the standard checks; sliding_window_mask is
compared exactly below with kit.user(args, target=...), with its own named mistakes.
"""

import math

import torch

from checker.kit import Fail, expect_raises, Mistake, UserError, case, check, compare, expect_structure
from checker.lang import t

TARGET = "sliding_window_attention"
DEVICE = True  # the mask is built inside: it must follow q's device
BATCH_INDEPENDENT = True
OUTPUTS = [("output", "(B, H, T, d_v)")]

# Every dimension its own size. The windows: a window inside the sequence (cases 1, 4), the
# smallest window (out == v), and a window longer than the sequence (plain causal attention).
CASES = [
    case(1, B=2, H=3, T=7, d_k=4, d_v=5, window=3),
    case(2, B=3, H=2, T=6, d_k=8, d_v=4, window=1),
    case(3, B=2, H=4, T=5, d_k=6, d_v=3, window=9),
    case(4, B=3, H=2, T=9, d_k=5, d_v=7, window=4),
]
TIMING = case(5, B=2, H=4, T=128, d_k=16, d_v=24, window=32)
# (T, window) for sliding_window_mask: inside, 1, == T, > T, T = 1, and a long one.
_MASK_CASES = [case(11, T=6, window=3), case(12, T=5, window=1), case(13, T=4, window=4),
              case(14, T=3, window=7), case(15, T=1, window=2), case(16, T=12, window=5)]


def inputs(c, dtype):
    g = c.generator()
    dt = getattr(torch, dtype)
    q = torch.randn(c.B, c.H, c.T, c.d_k, generator=g, dtype=torch.float64).to(dt)
    k = torch.randn(c.B, c.H, c.T, c.d_k, generator=g, dtype=torch.float64).to(dt)
    v = torch.randn(c.B, c.H, c.T, c.d_v, generator=g, dtype=torch.float64).to(dt)
    return q, k, v, c.window


# ----------------------------------------------------------------------------- named mistakes


def band(T, window, *, low=None, high=0, symmetric=False, invert=False, four_d=False):
    """The visible keys as a (T, T) bool mask: low < i - j <= ... with knobs; defaults are right."""
    i = torch.arange(T)
    d = i[:, None] - i[None, :]  # i - j
    low = -window if low is None else low
    mask = (d.abs() < window) if symmetric else (d >= high) & (d < -low)
    mask = ~mask if invert else mask
    mask = mask.view(1, 1, T, T) if four_d else mask
    return mask


_MASK_MISTAKES = [
    Mistake("window + 1 keys", lambda T, w, device=None: band(T, w + 1),
            "your mask shows window + 1 keys (i - window <= j <= i): query i sees itself and the window - 1 keys "
            "before it, i - window < j <= i"),
    Mistake("window - 1 keys", lambda T, w, device=None: band(T, w - 1),
            "your mask shows only window - 1 keys: query i sees itself and the window - 1 keys before it, "
            "i - window < j <= i (window = 1: the diagonal alone)"),
    Mistake("symmetric band", lambda T, w, device=None: band(T, w, symmetric=True),
            "your mask is a symmetric band |i - j| < window, so queries see future keys: keep only j <= i"),
    Mistake("window ignored", lambda T, w, device=None: band(T, T + 1),
            "your mask is the plain causal mask (tril): also hide the keys older than the window, j <= i - window"),
    Mistake("diagonal hidden", lambda T, w, device=None: band(T, w, high=1),
            "your mask hides the diagonal: query i must see itself, i - window < j <= i"),
    Mistake("inverted", lambda T, w, device=None: band(T, w, invert=True),
            "your mask is True on the hidden keys (the 1 = masked convention of the NumPy tutorial): here True means "
            "'may attend', so return the band itself"),
    Mistake("(1, 1, T, T)", lambda T, w, device=None: band(T, w, four_d=True),
            "your mask has shape (1, 1, T, T): the contract wants (T, T) (it broadcasts over (B, H) by itself)"),
]


def attend(q, k, v, window, *, mask="right", scale="sqrt_dk", axis=-1, fill="-inf"):
    """Attention under a (T, T) mask, with knobs; every knob at its default gives the right answer."""
    T = q.size(-2)
    divisor = {"sqrt_dk": math.sqrt(q.size(-1)), "none": 1.0, "dk": q.size(-1)}[scale]
    scores = q @ k.transpose(-2, -1) / divisor
    visible = {"right": lambda: band(T, window), "plus one": lambda: band(T, window + 1),
               "minus one": lambda: band(T, window - 1), "symmetric": lambda: band(T, window, symmetric=True),
               "causal": lambda: band(T, T + 1), "none": lambda: torch.ones(T, T, dtype=torch.bool)}[mask]()
    if fill == "times -inf":  # (~mask) * -inf: 0 · -inf is NaN on every visible score
        return (scores + (~visible) * float("-inf")).softmax(dim=axis) @ v
    weights = scores.masked_fill(~visible, {"-inf": float("-inf"), "zero": 0.0}[fill]).softmax(dim=axis)
    return weights.nan_to_num(0.0) @ v


def _variant(**knobs):
    return lambda q, k, v, window: attend(q, k, v, window, **knobs)


MISTAKES = [
    Mistake("window - 1 keys", _variant(mask="minus one"),
            "your output equals attention over window - 1 keys: query i sees itself and the window - 1 keys "
            "before it, i - window < j <= i"),
    Mistake("symmetric band", _variant(mask="symmetric"),
            "your output equals attention with a symmetric band |i - j| < window: queries see future keys; "
            "sliding-window attention in a decoder is causal, j <= i"),
    Mistake("window ignored", _variant(mask="causal"),
            "your output equals plain causal attention: the window is ignored, hide the keys j <= i - window too"),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals sliding-window attention without the 1/√d_k scale: divide q kᵀ by √d_k"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "sliding_window_mask(T, window, device) and sliding_window_attention(q, k, v, window) exist")
def structure(kit):
    expect_structure(kit, "sliding_window_mask", module=False, params=["T", "window", "device"])
    expect_structure(kit, TARGET, module=False, params=["q", "k", "v", "window"])


@check("masking", "sliding_window_mask(T, window) is (T, T) bool, True exactly where i - window < j <= i")
def mask_exact(kit):
    for c in _MASK_CASES:
        args = (c.T, c.window)
        got = kit.user(args, target="sliding_window_mask")
        want = kit.reference(args, target="sliding_window_mask")
        try:
            compare(got, want, f"sliding_window_mask(T={c.T}, window={c.window})", "(T, T)", exact=True)
        except Fail as fail:
            found = kit.name_mistake(args, got, _MASK_MISTAKES)
            raise Fail(fail.message, found or fail.diagnosis) from None




@check("masking", "sliding_window_mask(T, window, device='meta') is made on the requested device")
def mask_device(kit):
    try:
        layout = kit.layout((5, 2, "meta"), target="sliding_window_mask", dtype=None)
    except UserError as err:
        if err.not_implemented:
            raise
        raise Fail(t("sliding_window_mask(5, 2, device='meta') raised {err}: create every tensor with device=device "
                     "(torch.arange(T, device=device))", err=err)) from None
    if not layout or layout[0] is None or layout[0]["device"] != "meta":
        where = layout[0]["device"] if layout and layout[0] else t("no tensor")
        raise Fail(t("sliding_window_mask(5, 2, device='meta') came back on {where}: create the mask on `device` "
                     "(torch.arange(T, device=device), torch.ones(T, T, dtype=torch.bool, device=device))", where=where))


@check("masking", "output at position i depends only on keys and values i - window < j <= i")
def influence(kit):
    c = CASES[3]
    q, k, v, window = inputs(c, "float64")
    before = kit.user((q, k, v, window))
    for pos in (2, 5):
        k2, v2 = k.clone(), v.clone()
        k2[:, :, pos] += 3.0
        v2[:, :, pos] += 10.0  # change only key/value position pos
        after = kit.user((q, k2, v2, window))
        if not isinstance(after, torch.Tensor) or after.shape != before.shape:
            raise Fail(t("{label}: the output should be a tensor of shape (B, H, T, d_v)", label=c.label))
        changed = (after - before).abs().amax(dim=(0, 1, 3)) > 1e-12  # (T,): which query positions moved
        seen = [i for i in range(c.T) if pos <= i < pos + window]
        leaked = [i for i in range(c.T) if changed[i] and i not in seen]
        missing = [i for i in seen if not changed[i]]
        if leaked:
            i = leaked[0]
            kind = t("a FUTURE key") if i < pos else t("a key {back} positions back, outside the window of {window}",
                                                       back=i - pos, window=window)
            raise Fail(t("{label}: changing key/value position {pos} changed the output at position {i}: query {i} "
                         "reads {kind}. Query i may read only keys i - window < j <= i", label=c.label, pos=pos, i=i,
                         kind=kind))
        if missing:
            raise Fail(t("{label}: changing key/value position {pos} left the output at position {i} unchanged, but key "
                         "{pos} is inside its window ({i} - {window} < {pos} <= {i})", label=c.label, pos=pos,
                         i=missing[0], window=window))


@check("properties", "a window as long as the sequence (or longer) gives plain causal attention")
def long_window_is_causal(kit):
    c = CASES[0]
    q, k, v, _ = inputs(c, "float64")
    causal = attend(q, k, v, c.T)
    for window in (c.T, c.T + 5):
        try:
            compare(kit.user((q, k, v, window)), causal, t("output with window={window} >= T={T}", window=window,
                                                           T=c.T), "(B, H, T, d_v)")
        except Fail as fail:
            raise Fail(t("{label}: {fail}. With window >= T nothing is cut: it must equal causal attention",
                         label=c.label, fail=fail)) from None


@check("properties", "window = 1 gives out == v (every query sees only itself)")
def window_one(kit):
    c = CASES[0]
    q, k, v, _ = inputs(c, "float64")
    try:
        compare(kit.user((q, k, v, 1)), v, t("output with window=1"), "(B, H, T, d_v)")
    except Fail as fail:
        raise Fail(t("{label}: {fail}. With window = 1 each query sees only its own key, its weight is 1, so the output "
                     "is v itself", label=c.label, fail=fail)) from None


def _why():
    return t("Follow-up: what should sliding_window_mask(T, 0) do? A window below 1 lets a query see nothing, not even "
             "itself, and every row of its attention turns NaN (or uniform with -1e9) far from the bad argument; the "
             "reference raises ValueError at once")


@check("properties", "a window below 1 raises ValueError")
def bad_window(kit):
    expect_raises([(f"sliding_window_mask(4, window={window})",
                    lambda window=window: kit.user((4, window), target="sliding_window_mask")) for window in (0, -2)],
                  t("a window of 0 hides every key, and each softmax row becomes NaN, far from the line that caused it"))