"""Hidden checks: NumPy layer normalization."""


import numpy as np
import torch

from checker.lang import register, t
from checker.kit import Fail, Mistake, UserError, case, check, compare, expect_structure, raised

_TRACK = "numpy"  # no autograd checks
TARGET = "layer_norm"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]

# Every dimension its own size, rank 3 and rank 2. Case 3 holds a constant row (variance 0) and a
# row with a large mean; case 4 passes epsilon=0.01 explicitly on rows of small variance, so an
# epsilon that is ignored, or added outside the square root, shows.
CASES = [
    case(1, B=2, T=5, D=8),
    case(2, N=6, D=7),
    case(3, B=3, T=4, D=6, rows="x[0, 0] constant 2.5, x[1, 2] mean 500"),
    case(4, N=5, D=9, epsilon=0.01, rows="variance about 0.01"),
]


def _lead(c) -> tuple:
    return (c.B, c.T) if "B" in c.dims else (c.N,)


def inputs(c, dtype):
    g = c.generator()
    x = torch.randn(*_lead(c), c.D, generator=g, dtype=torch.float64) * 1.5 + 0.3
    gamma = torch.randn(c.D, generator=g, dtype=torch.float64)  # random, so gamma and beta cannot be swapped unseen
    beta = torch.randn(c.D, generator=g, dtype=torch.float64)
    if c.id == 3:
        x[0, 0] = 2.5  # variance exactly 0 (2.5 and its sums are exact)
        x[1, 2] = 500.0 + 20.0 * torch.randn(c.D, generator=g, dtype=torch.float64)
    if c.id == 4:
        x = x * 0.1  # variance ~0.02, same order as epsilon
    args = tuple(a.numpy().astype(dtype) for a in (x, gamma, beta))
    return args + ((c.epsilon,) if "epsilon" in c.extra else ())


# ----------------------------------------------------------------------------- named mistakes


def norm(x, gamma, beta, epsilon=1e-6, *, ddof=0, eps_outside=False, axis=-1, swap=False, shift=True, scale=True,
         center=True, root=True, beta_inside=False):
    """Layer norm with knobs; every knob at its default gives the right answer."""
    if swap:
        gamma, beta = beta, gamma
    mean = x.mean(axis=axis, keepdims=True) if center else 0.0
    std = x.std(axis=axis, keepdims=True, ddof=ddof) if center else np.sqrt((x * x).mean(axis=axis, keepdims=True))
    with np.errstate(divide="ignore", invalid="ignore"):  # no epsilon: a constant row is 0/0, as in the user's code
        x_hat = (x - mean) / (std + epsilon) if eps_outside else (x - mean) / np.sqrt(std**2 + epsilon) if root \
            else (x - mean) / (std**2 + epsilon)
    if beta_inside:
        return gamma * (x_hat + beta)
    return (gamma * x_hat if scale else x_hat) + (beta if shift else 0)


def _variant(default_eps=1e-6, **knobs):
    return lambda x, gamma, beta, epsilon=default_eps: norm(x, gamma, beta, epsilon, **knobs)


MISTAKES = [
    Mistake("float64 out for float32 in", lambda x, gamma, beta, epsilon=1e-6: norm(
        x.astype(np.float64), gamma.astype(np.float64), beta.astype(np.float64), epsilon),
            "your values are right but float32 inputs give a float64 output: keep x's dtype (no .astype(np.float64), "
            "and no NumPy float64 scalar such as np.float64(epsilon) in the arithmetic)"),
    Mistake("unbiased variance", _variant(ddof=1),
            "your output equals layer norm with the unbiased variance (divide by D - 1, ddof=1): layer norm "
            "divides by D, np.var's default ddof=0"),
    Mistake("epsilon outside the square root", _variant(eps_outside=True),
            "your output equals (x - mean) / (std + epsilon), seed 002's version: epsilon goes inside the "
            "square root, (x - mean) / np.sqrt(var + epsilon)"),
    Mistake("annotated-transformer std", _variant(ddof=1, eps_outside=True),
            "your output equals (x - mean) / (std + epsilon) with the unbiased std (ddof=1), the Annotated "
            "Transformer's LayerNorm (torch's x.std() is unbiased): use the biased variance and "
            "np.sqrt(var + epsilon)"),
    Mistake("no epsilon", _variant(default_eps=0.0),
            "your output equals layer norm without epsilon: divide by np.sqrt(var + epsilon); epsilon also keeps a "
            "constant row (variance 0) from becoming 0/0 = NaN"),
    Mistake("default epsilon 1e-5", _variant(default_eps=1e-5),
            "your default epsilon is 1e-5 (nn.LayerNorm's): this kata follows seed 000, epsilon=1e-6"),
    Mistake("epsilon argument ignored", lambda x, gamma, beta, epsilon=1e-6: norm(x, gamma, beta),
            "your output ignores the epsilon argument (it equals epsilon=1e-6 when 0.01 was passed): "
            "use the epsilon parameter"),
    Mistake("gamma and beta swapped", _variant(swap=True),
            "your output equals beta * x_hat + gamma: gamma and beta are swapped, y = gamma * x_hat + beta"),
    Mistake("missing beta", _variant(shift=False),
            "your output equals gamma * x_hat with no shift: add beta, y = gamma * x_hat + beta"),
    Mistake("missing gamma", _variant(scale=False),
            "your output equals x_hat + beta with no scale: multiply by gamma, y = gamma * x_hat + beta"),
    Mistake("normalised over the wrong axis", _variant(axis=-2),
            "your output is normalised over axis -2 (over positions, not features): take the mean and variance "
            "over the last axis, axis=-1, keepdims=True"),
    Mistake("statistics over axis 0", _variant(axis=0),
            "your statistics are taken over axis 0, across the batch (batch norm): layer norm normalises each "
            "vector over its own features, axis=-1"),
    Mistake("statistics over the last two axes", _variant(axis=(-2, -1)),
            "your statistics are taken over the last TWO axes: layer norm normalises each vector on its own, "
            "over axis=-1 only"),
    Mistake("mean not subtracted", _variant(center=False),
            "your output divides x by its root mean square without subtracting the mean: that is RMSNorm; layer "
            "norm centres first, (x - mean) / sqrt(var + eps)"),
    Mistake("variance without the square root", _variant(root=False),
            "you divide by var + epsilon: divide by its square root, np.sqrt(var + epsilon), the standard deviation"),
    Mistake("beta inside the scale", _variant(beta_inside=True),
            "your output is gamma * (x_hat + beta): the shift comes after the scale, gamma * x_hat + beta"),
    Mistake("normalised over the whole array", _variant(axis=None),
            "your output uses one mean and one variance for the whole array: each vector x[..., :] is "
            "normalised on its own, over axis=-1 with keepdims=True"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "layer_norm is a function taking (x, gamma, beta, epsilon)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["x", "gamma", "beta", "epsilon"])


@check("shapes", "rank 2 and rank 3 inputs keep their shape (statistics taken with keepdims)")
def ranks(kit):
    for c in CASES[:2]:
        args = inputs(c, "float64")
        try:
            got = kit.user(args)
        except UserError as err:
            if err.not_implemented or "broadcast" not in err.message:
                raise
            raise raised(c.label, err, t("the mean and the variance over the last axis must keep that axis with size 1, shape {shape}, "
                         "to broadcast against x: use keepdims=True (or mean[..., None])",
                         shape=args[0].shape[:-1] + (1,))) from None
        if not isinstance(got, np.ndarray) or got.shape != args[0].shape:
            shape = got.shape if isinstance(got, np.ndarray) else t("a {kind}", kind=type(got).__name__)
            raise Fail(t("{label}: output should be a NumPy array of x's shape (..., D) = {want}, got {got}",
                         label=c.label, want=args[0].shape, got=shape))


@check("numerics", "a constant row (variance 0) comes out finite, not NaN")
def constant_row(kit):
    c = CASES[2]
    got = kit.user(inputs(c, "float64"))
    if not isinstance(got, np.ndarray) or got.shape != (c.B, c.T, c.D):
        raise Fail(t("{label}: the output should be a NumPy array of shape (B, T, D) = {want} first", label=c.label,
                     want=(c.B, c.T, c.D)))
    row = got[0, 0]
    if not np.all(np.isfinite(row)):
        raise Fail(t("{label}: x[0, 0] = [2.5, 2.5, ...] has variance 0 and came out {row}...: divide by "
                     "np.sqrt(var + epsilon), with epsilon inside the square root, so a zero variance gives "
                     "0 / sqrt(epsilon) = 0 and the row becomes beta", label=c.label, row=row[:3].tolist()))


@check("properties", "adding 10⁶ to every input leaves the output unchanged (variance computed stably)")
def shift_invariance(kit):
    # Values on a 2^-16 grid: x + 1e6 is exact in float64, so a correct two-pass layer norm moves by
    # ~1e-10 (the rounding of the mean), while mean(x²) - mean² loses ~1e-4 to cancellation.
    c = CASES[0]
    x, gamma, beta = inputs(c, "float64")
    x = np.round(x * 2**16) / 2**16
    plain = kit.user((x, gamma, beta))
    shifted = kit.user((x + 1e6, gamma, beta))
    try:
        compare(shifted, plain, t("output for x + 1e6"), "(..., D)", tol=(1e-7, 1e-7))
    except Fail as fail:
        raise Fail(t("{label}: compared with your own output for x: {fail}. Layer norm subtracts each vector's mean, "
                     "so shifting every value must not change the result", label=c.label, fail=fail),
                   t("your variance loses precision when the mean is large: subtract the mean before squaring, "
                     "var = mean((x - mean)²); mean(x²) - mean² cancels catastrophically")) from None


_ZH = register({
    # case settings, shown in the case labels
    "variance about 0.01": "方差约为 0.01",
    "your statistics are taken over axis 0, across the batch (batch norm): layer norm normalises each "
    "vector over its own features, axis=-1":
        "你的统计量是在第 0 维上、跨批次求的（那是批归一化）：层归一化对每个向量在它自己的特征上归一化，axis=-1",
    "your statistics are taken over the last TWO axes: layer norm normalises each vector on its own, "
    "over axis=-1 only":
        "你的统计量是在最后两维上求的：层归一化对每个向量单独归一化，只在 axis=-1 上",
    "you divide by var + epsilon: divide by its square root, np.sqrt(var + epsilon), the standard deviation":
        "你除以的是 var + epsilon：应除以它的平方根 np.sqrt(var + epsilon)，即标准差",
    "your values are right but float32 inputs give a float64 output: keep x's dtype (no .astype(np.float64), and no "
    "NumPy float64 scalar such as np.float64(epsilon) in the arithmetic)":
        "数值是对的，但 float32 的输入得到了 float64 的输出：保持 x 的 dtype（不要 .astype(np.float64)，运算中也不要用 "
        "np.float64(epsilon) 这样的 NumPy float64 标量）",
    "your output equals layer norm with the unbiased variance (divide by D - 1, ddof=1): layer norm divides by D, "
    "np.var's default ddof=0": "你的输出等于用无偏方差（除以 D - 1，ddof=1）的层归一化：层归一化除以 D，即 np.var 默认的 ddof=0",
    "your output equals (x - mean) / (std + epsilon), seed 002's version: epsilon goes inside the square root, "
    "(x - mean) / np.sqrt(var + epsilon)": "你的输出等于 (x - mean) / (std + epsilon)，这是 seed 002 的写法：epsilon "
                                           "要放在平方根里面，(x - mean) / np.sqrt(var + epsilon)",
    "your output equals (x - mean) / (std + epsilon) with the unbiased std (ddof=1), the Annotated Transformer's "
    "LayerNorm (torch's x.std() is unbiased): use the biased variance and np.sqrt(var + epsilon)":
        "你的输出等于用无偏标准差（ddof=1）的 (x - mean) / (std + epsilon)，这是 Annotated Transformer 的 LayerNorm"
        "（torch 的 x.std() 是无偏的）：请用有偏方差和 np.sqrt(var + epsilon)",
    "your output equals layer norm without epsilon: divide by np.sqrt(var + epsilon); epsilon also keeps a constant "
    "row (variance 0) from becoming 0/0 = NaN": "你的输出等于没有 epsilon 的层归一化：要除以 np.sqrt(var + epsilon)；"
                                                "epsilon 还能防止常数行（方差为 0）变成 0/0 = NaN",
    "your default epsilon is 1e-5 (nn.LayerNorm's): this kata follows seed 000, epsilon=1e-6":
        "你的 epsilon 默认值是 1e-5（nn.LayerNorm 的默认值）：本题沿用 seed 000，epsilon=1e-6",
    "your output ignores the epsilon argument (it equals epsilon=1e-6 when 0.01 was passed): use the epsilon parameter":
        "你的输出忽略了 epsilon 参数（传入 0.01 时，结果等于 epsilon=1e-6 的结果）：请使用 epsilon 参数",
    "your output equals beta * x_hat + gamma: gamma and beta are swapped, y = gamma * x_hat + beta":
        "你的输出等于 beta * x_hat + gamma：gamma 和 beta 弄反了，y = gamma * x_hat + beta",
    "your output equals gamma * x_hat with no shift: add beta, y = gamma * x_hat + beta":
        "你的输出等于 gamma * x_hat，没有平移：要加上 beta，y = gamma * x_hat + beta",
    "your output equals x_hat + beta with no scale: multiply by gamma, y = gamma * x_hat + beta":
        "你的输出等于 x_hat + beta，没有缩放：要乘以 gamma，y = gamma * x_hat + beta",
    "your output is normalised over axis -2 (over positions, not features): take the mean and variance over the last "
    "axis, axis=-1, keepdims=True": "你的输出是在 axis -2 上归一化的（在位置上，而不是在特征上）：均值和方差要在最后一维上取，"
                                    "axis=-1, keepdims=True",
    "your output uses one mean and one variance for the whole array: each vector x[..., :] is normalised on its own, "
    "over axis=-1 with keepdims=True": "你的输出对整个数组只用了一个均值和一个方差：每个向量 x[..., :] 要各自归一化，"
                                       "在 axis=-1 上并加 keepdims=True",
    "layer_norm is a function taking (x, gamma, beta, epsilon)": "layer_norm 是一个接受 (x, gamma, beta, epsilon) 的函数",
    "rank 2 and rank 3 inputs keep their shape (statistics taken with keepdims)":
        "2 维和 3 维输入都保持原来的形状（统计量用 keepdims 计算）",
    "a constant row (variance 0) comes out finite, not NaN": "常数行（方差为 0）的结果是有限值，而不是 NaN",
    "adding 10⁶ to every input leaves the output unchanged (variance computed stably)":
        "每个输入都加上 10⁶，输出不变（方差的计算数值稳定）",
    "the mean and the variance over the last axis must keep that axis with size 1, shape {shape}, to broadcast "
    "against x: use keepdims=True (or mean[..., None])":
        "在最后一维上求的均值和方差必须保留这一维（大小为 1），形状为 {shape}，才能和 x 广播：请用 keepdims=True"
        "（或 mean[..., None]）",
    "a {kind}": "一个 {kind}",
    "{label}: output should be a NumPy array of x's shape (..., D) = {want}, got {got}":
        "{label}：输出应该是和 x 形状相同的 NumPy 数组 (..., D) = {want}，实际是 {got}",
    "{label}: the output should be a NumPy array of shape (B, T, D) = {want} first":
        "{label}：输出首先应该是形状为 (B, T, D) = {want} 的 NumPy 数组",
    "{label}: x[0, 0] = [2.5, 2.5, ...] has variance 0 and came out {row}...: divide by np.sqrt(var + epsilon), with "
    "epsilon inside the square root, so a zero variance gives 0 / sqrt(epsilon) = 0 and the row becomes beta":
        "{label}：x[0, 0] = [2.5, 2.5, ...] 的方差为 0，结果却是 {row}...：要除以 np.sqrt(var + epsilon)，epsilon 放在"
        "平方根里面，这样方差为 0 时得到 0 / sqrt(epsilon) = 0，这一行就变成 beta",
    "output for x + 1e6": "x + 1e6 的输出",
    "{label}: compared with your own output for x: {fail}. Layer norm subtracts each vector's mean, so shifting every "
    "value must not change the result":
        "{label}：与你自己对 x 的输出比较：{fail}。层归一化会减去每个向量的均值，所以所有值整体平移不应改变结果",
    "your variance loses precision when the mean is large: subtract the mean before squaring, "
    "var = mean((x - mean)²); mean(x²) - mean² cancels catastrophically":
        "均值很大时你的方差会丢失精度：请先减去均值再平方，var = mean((x - mean)²)；mean(x²) - mean² 会发生灾难性抵消",
})
