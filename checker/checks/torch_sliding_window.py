"""Hidden checks: sliding-window attention and its mask.

TARGET (sliding_window_attention) goes through the standard checks; sliding_window_mask is
compared exactly below with kit.user(args, target=...), with its own named mistakes.
"""

import math

import torch

from checker.kit import Accepted, Fail, Mistake, UserError, case, check, compare, expect_structure
from checker.lang import register, t

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


def band(T, window, *, low=None, high=0, symmetric=False, as_float=False, invert=False, four_d=False):
    """The visible keys as a (T, T) bool mask: low < i - j <= ... with knobs; defaults are right."""
    i = torch.arange(T)
    d = i[:, None] - i[None, :]  # i - j
    low = -window if low is None else low
    mask = (d.abs() < window) if symmetric else (d >= high) & (d < -low)
    mask = ~mask if invert else mask
    mask = mask.view(1, 1, T, T) if four_d else mask
    return mask.float() if as_float else mask


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
            "your mask is True on the hidden keys (the 1 = masked convention of seed 000): here True means "
            "'may attend', so return the band itself"),
    Mistake("float", lambda T, w, device=None: band(T, w, as_float=True),
            "your mask is a float 0/1 tensor: return a bool tensor (comparisons and & already give one)"),
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
    Mistake("window + 1 keys", _variant(mask="plus one"),
            "your output equals attention over window + 1 keys (i - window <= j <= i): query i sees itself and "
            "the window - 1 keys before it, i - window < j <= i"),
    Mistake("window - 1 keys", _variant(mask="minus one"),
            "your output equals attention over window - 1 keys: query i sees itself and the window - 1 keys "
            "before it, i - window < j <= i"),
    Mistake("symmetric band", _variant(mask="symmetric"),
            "your output equals attention with a symmetric band |i - j| < window: queries see future keys; "
            "sliding-window attention in a decoder is causal, j <= i"),
    Mistake("window ignored", _variant(mask="causal"),
            "your output equals plain causal attention: the window is ignored, hide the keys j <= i - window too"),
    Mistake("no mask", _variant(mask="none"),
            "your output equals attention with no mask at all: hide the future and the keys older than the window"),
    Mistake("missing scale", _variant(scale="none"),
            "your output equals sliding-window attention without the 1/√d_k scale: divide q kᵀ by √d_k"),
    Mistake("scale by d_k", _variant(scale="dk"),
            "your output equals sliding-window attention scaled by 1/d_k: the scale is 1/√d_k"),
    Mistake("softmax over queries", _variant(axis=-2),
            "your weights are normalised over the queries (dim=-2): softmax runs over the keys, dim=-1"),
    Mistake("hidden scores set to 0", _variant(fill="zero"),
            "your hidden scores are set to 0 (a fill or a product with the mask), and exp(0) = 1 still gives them "
            "weight: fill them with -inf before the softmax, scores.masked_fill(~mask, float('-inf'))"),
    Mistake("mask times -inf", _variant(fill="times -inf"),
            "your output is NaN everywhere, as when (~mask) * -inf is added to the scores (0 · -inf is NaN, on "
            "every visible score): hide keys with scores.masked_fill(~mask, float('-inf'))"),
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
            raise Fail(f"{fail}", found) from None




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


@check("properties", "a window below 1 raises ValueError", followup=True)
def bad_window(kit):
    asserted = False
    for window in (0, -2):
        try:
            kit.user((4, window), target="sliding_window_mask")
        except UserError as err:
            if err.not_implemented:
                raise
            if err.kind == "AssertionError":
                asserted = True
            elif err.kind != "ValueError":
                raise Fail(t("sliding_window_mask(4, window={window}) raised {err}. {why}", window=window, err=err,
                             why=_why())) from None
            continue
        raise Fail(t("sliding_window_mask(4, window={window}) returned a mask. {why}", window=window, why=_why()))
    if asserted:
        raise Accepted(t("an `assert` for the window check was recognised (AssertionError): the reference raises "
                         "ValueError, because asserts vanish under `python -O` and a window of 0 would then pass "
                         "silently"))


_ZH = register({
    "your hidden scores are set to 0 (a fill or a product with the mask), and exp(0) = 1 still gives them weight: "
    "fill them with -inf before the softmax, scores.masked_fill(~mask, float('-inf'))":
        "你把被遮挡的分数设成了 0（填 0 或者乘以掩码），而 exp(0) = 1 仍会给它们权重："
        "softmax 之前要把它们填成 -inf，scores.masked_fill(~mask, float('-inf'))",
    "your output is NaN everywhere, as when (~mask) * -inf is added to the scores (0 · -inf is NaN, on every visible "
    "score): hide keys with scores.masked_fill(~mask, float('-inf'))":
        "你的输出处处是 NaN，就像把 (~mask) * -inf 加到分数上那样（0 · -inf 是 NaN，每个可见的分数都会变成 NaN）："
        "请用 scores.masked_fill(~mask, float('-inf')) 遮挡键",
    "sliding_window_mask(T, window, device) and sliding_window_attention(q, k, v, window) exist":
        "存在 sliding_window_mask(T, window, device) 和 sliding_window_attention(q, k, v, window)",
    "sliding_window_mask(T, window) is (T, T) bool, True exactly where i - window < j <= i":
        "sliding_window_mask(T, window) 是 (T, T) 的 bool 张量，恰好在 i - window < j <= i 处为 True",
    "sliding_window_mask(T, window, device='meta') is made on the requested device":
        "sliding_window_mask(T, window, device='meta') 在指定的设备上创建",
    "output at position i depends only on keys and values i - window < j <= i":
        "位置 i 的输出只取决于 i - window < j <= i 的键和值",
    "a window as long as the sequence (or longer) gives plain causal attention":
        "窗口与序列一样长（或更长）时，结果就是普通的因果注意力",
    "window = 1 gives out == v (every query sees only itself)": "window = 1 时 out == v（每个查询只看到它自己）",
    "a window below 1 raises ValueError": "窗口小于 1 时抛出 ValueError",
    "your mask shows window + 1 keys (i - window <= j <= i): query i sees itself and the window - 1 keys before it, "
    "i - window < j <= i":
        "你的掩码露出了 window + 1 个键（i - window <= j <= i）：查询 i 看到的是它自己和它之前的 window - 1 个键，"
        "i - window < j <= i",
    "your mask shows only window - 1 keys: query i sees itself and the window - 1 keys before it, i - window < j <= i "
    "(window = 1: the diagonal alone)":
        "你的掩码只露出了 window - 1 个键：查询 i 看到的是它自己和它之前的 window - 1 个键，i - window < j <= i"
        "（window = 1 时只有对角线）",
    "your mask is a symmetric band |i - j| < window, so queries see future keys: keep only j <= i":
        "你的掩码是对称的带状 |i - j| < window，所以查询看到了未来的键：只保留 j <= i",
    "your mask is the plain causal mask (tril): also hide the keys older than the window, j <= i - window":
        "你的掩码是普通的因果掩码（tril）：还要遮挡窗口之外更早的键，j <= i - window",
    "your mask hides the diagonal: query i must see itself, i - window < j <= i":
        "你的掩码遮挡了对角线：查询 i 必须能看到它自己，i - window < j <= i",
    "your mask is True on the hidden keys (the 1 = masked convention of seed 000): here True means 'may attend', so "
    "return the band itself":
        "你的掩码在被遮挡的键上为 True（seed 000 的 1 = 遮挡 约定）：这里 True 表示“可以关注”，所以要返回带状区域本身",
    "your mask is a float 0/1 tensor: return a bool tensor (comparisons and & already give one)":
        "你的掩码是 0/1 的浮点张量：要返回 bool 张量（比较运算和 & 本来就会得到 bool）",
    "your mask has shape (1, 1, T, T): the contract wants (T, T) (it broadcasts over (B, H) by itself)":
        "你的掩码形状是 (1, 1, T, T)：约定要求 (T, T)（它会自己在 (B, H) 上广播）",
    "your output equals attention over window + 1 keys (i - window <= j <= i): query i sees itself and the window - 1 "
    "keys before it, i - window < j <= i":
        "你的输出等于在 window + 1 个键上做注意力（i - window <= j <= i）：查询 i 看到的是它自己和它之前的 window - 1 "
        "个键，i - window < j <= i",
    "your output equals attention over window - 1 keys: query i sees itself and the window - 1 keys before it, "
    "i - window < j <= i":
        "你的输出等于在 window - 1 个键上做注意力：查询 i 看到的是它自己和它之前的 window - 1 个键，i - window < j <= i",
    "your output equals attention with a symmetric band |i - j| < window: queries see future keys; sliding-window "
    "attention in a decoder is causal, j <= i":
        "你的输出等于用对称带状 |i - j| < window 做的注意力：查询看到了未来的键；解码器中的滑动窗口注意力是因果的，j <= i",
    "your output equals plain causal attention: the window is ignored, hide the keys j <= i - window too":
        "你的输出等于普通的因果注意力：窗口被忽略了，还要遮挡 j <= i - window 的键",
    "your output equals attention with no mask at all: hide the future and the keys older than the window":
        "你的输出等于完全没有掩码的注意力：要遮挡未来的键和窗口之外更早的键",
    "your output equals sliding-window attention without the 1/√d_k scale: divide q kᵀ by √d_k":
        "你的输出等于没有 1/√d_k 缩放的滑动窗口注意力：要把 q kᵀ 除以 √d_k",
    "your output equals sliding-window attention scaled by 1/d_k: the scale is 1/√d_k":
        "你的输出等于按 1/d_k 缩放的滑动窗口注意力：缩放因子是 1/√d_k",
    "your weights are normalised over the queries (dim=-2): softmax runs over the keys, dim=-1":
        "你的权重是在查询上归一化的（dim=-2）：softmax 要在键上做，dim=-1",
    "sliding_window_mask(5, 2, device='meta') raised {err}: create every tensor with device=device "
    "(torch.arange(T, device=device))":
        "sliding_window_mask(5, 2, device='meta') 抛出了 {err}：创建每个张量时都要传 device=device"
        "（torch.arange(T, device=device)）",
    "no tensor": "没有张量",
    "sliding_window_mask(5, 2, device='meta') came back on {where}: create the mask on `device` (torch.arange(T, "
    "device=device), torch.ones(T, T, dtype=torch.bool, device=device))":
        "sliding_window_mask(5, 2, device='meta') 返回的结果在 {where} 上：要在 `device` 上创建掩码"
        "（torch.arange(T, device=device)，torch.ones(T, T, dtype=torch.bool, device=device)）",
    "{label}: the output should be a tensor of shape (B, H, T, d_v)": "{label}：输出应该是形状为 (B, H, T, d_v) 的张量",
    "a FUTURE key": "一个未来的键",
    "a key {back} positions back, outside the window of {window}": "往前 {back} 个位置的键，在大小为 {window} 的窗口之外",
    "{label}: changing key/value position {pos} changed the output at position {i}: query {i} reads {kind}. Query i may "
    "read only keys i - window < j <= i":
        "{label}：改动键/值位置 {pos}，改变了位置 {i} 的输出：查询 {i} 读取了{kind}。查询 i 只能读取 "
        "i - window < j <= i 的键",
    "{label}: changing key/value position {pos} left the output at position {i} unchanged, but key {pos} is inside its "
    "window ({i} - {window} < {pos} <= {i})":
        "{label}：改动键/值位置 {pos}，位置 {i} 的输出却没有变化，但键 {pos} 在它的窗口之内（{i} - {window} < {pos} <= {i}）",
    "output with window={window} >= T={T}": "window={window} >= T={T} 时的输出",
    "{label}: {fail}. With window >= T nothing is cut: it must equal causal attention":
        "{label}：{fail}。window >= T 时什么都不会被截掉：结果必须等于因果注意力",
    "output with window=1": "window=1 时的输出",
    "{label}: {fail}. With window = 1 each query sees only its own key, its weight is 1, so the output is v itself":
        "{label}：{fail}。window = 1 时每个查询只看到它自己的键，权重为 1，所以输出就是 v 本身",
    "Follow-up: what should sliding_window_mask(T, 0) do? A window below 1 lets a query see nothing, not even itself, "
    "and every row of its attention turns NaN (or uniform with -1e9) far from the bad argument; the reference raises "
    "ValueError at once":
        "追问：sliding_window_mask(T, 0) 应该怎么处理？窗口小于 1 时，查询什么都看不到，连它自己都看不到，注意力的每一行"
        "都会变成 NaN（用 -1e9 时则变成均匀分布），而出错的地方离错误的参数很远；参考答案会立即抛出 ValueError",
    "sliding_window_mask(4, window={window}) raised {err}. {why}": "sliding_window_mask(4, window={window}) 抛出了 {err}。{why}",
    "sliding_window_mask(4, window={window}) returned a mask. {why}": "sliding_window_mask(4, window={window}) 返回了一个掩码。{why}",
    "an `assert` for the window check was recognised (AssertionError): the reference raises ValueError, because "
    "asserts vanish under `python -O` and a window of 0 would then pass silently":
        "识别出了用 `assert` 检查窗口（AssertionError）：参考答案抛出 ValueError，因为 `python -O` 下 assert 会消失，"
        "窗口为 0 时就会悄无声息地通过",
})
