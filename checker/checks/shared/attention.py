"""Checks shared by the attention katas: the torch modules that return (out, attn), multi-head and
grouped-query, and the NumPy functions that return (output, attention_weights).

Each kata calls these with its own way of running the user's module, so the verdicts (and their
wording) are written once.
"""

import numpy as np
import torch

from checker.kit import FLOAT32_INSIDE, Convention, Fail, FollowUp, compare
from checker.lang import register, t


# LLaMA's attention computes the softmax in float32 whatever the input's dtype:
# F.softmax(scores.float(), dim=-1).type_as(xq). On float64 input that is float32 internals, about 1e-7
# off; every named mistake of the katas that accept it moves the result by far more (their reference tests).
FLOAT32_SOFTMAX = Convention(
    "float32 softmax", "LLaMA's float32 softmax was recognised (F.softmax(scores.float(), dim=-1)"
    ".type_as(q)): on float64 input your weights carry float32 rounding, about 1e-7, and are held to "
    "1e-5 here. This kata's reference keeps the input's dtype throughout (scores.softmax(dim=-1)); "
    "LLaMA upcasts because it runs in float16/bfloat16, where a softmax in half precision loses digits",
    tol=FLOAT32_INSIDE)


def out_and_attn(value, c, out_shape: tuple, out_legend: str, attn_shape: tuple, attn_legend: str):
    """(out, attn) from what forward returned, or a Fail saying what is wrong with its form or shapes."""
    if not (isinstance(value, (tuple, list)) and len(value) == 2 and all(isinstance(v, torch.Tensor) for v in value)):
        raise Fail(t("{label}: forward should return a tuple (out, attn) of tensors", label=c.label))
    out, attn = value
    for name, got, want, legend in (("out", out, out_shape, out_legend), ("attn", attn, attn_shape, attn_legend)):
        if tuple(got.shape) != want:
            raise Fail(t("{label}: {name} should have shape {legend} = {want}, got {got}", label=c.label, name=name,
                         legend=legend, want=want, got=tuple(got.shape)))
    return out, attn


def hidden_keys_get_zero(c, attn, visible, advice: str = "") -> None:
    """No weight on a hidden key (visible: bool, broadcastable to attn; True = may attend)."""
    leaked = attn.masked_fill(visible.expand(attn.shape), 0.0)
    if torch.isnan(leaked).any() or (leaked != 0).any():
        b, h, i, j = (leaked.isnan() | (leaked != 0)).nonzero()[0].tolist()
        raise Fail(t("{label}: query {i} gives weight {w:.3g} to hidden key {j} (batch {b}, head {h}); fill hidden "
                     "scores with -inf before softmax (True = may attend{advice})", label=c.label, i=i,
                     w=leaked[b, h, i, j].item(), j=j, b=b, h=h, advice=advice))


def no_future_leak(c, run, x) -> None:
    """Under a causal mask, changing positions after t leaves the output up to t unchanged. run(x) -> out."""
    out = run(x)
    for pos in range(x.size(1) - 1):
        changed = x.clone()
        changed[:, pos + 1:] += 3.0  # change only the future of position pos
        if not torch.allclose(out[:, : pos + 1], run(changed)[:, : pos + 1], rtol=1e-12, atol=1e-12):
            raise Fail(t("{label}: changing the inputs after position {pos} changed the output at position ≤ {pos}: "
                         "the future leaks into the past: check the mask, the softmax axis (the keys, dim=-1) and "
                         "that the heads are split and combined with a transpose", label=c.label, pos=pos))


TORCH_FIX = "attn.masked_fill(~mask, 0.0) after softmax"  # a key of _ZH: blind_why translates it
NUMPY_FIX = "np.where(mask, weights, 0.0) after softmax"


def blind_why(fix: str = TORCH_FIX) -> str:
    """The question an interviewer asks after the textbook answer: every blind-query verdict ends with it."""
    return t("Follow-up: what should a query that may see no key return (a row of padding, or a causal mask over a "
             "left-padded batch)? A NaN there spreads to the whole batch through the loss and its gradients; this "
             "kata's reference gives zero weights and a zero attention output, e.g. {fix}", fix=t(fix))


def blind_verdict(c, where: str, nan: bool, weights=None, fix: str = TORCH_FIX) -> FollowUp:
    """The follow-up for a query that sees no key: NaN (an unguarded -inf fill) or other weights (-1e9: uniform).

    Raise it from any check: a FollowUp passes (fails under --strict) whether or not the check is marked."""
    if nan:
        return FollowUp(t("{label}: {where} sees no key and came out NaN: softmax over a row that is all -inf (the "
                          "-inf fill of seed 003) is 0/0. {why}", label=c.label, where=where, why=blind_why(fix)))
    if weights is None:
        return FollowUp(t("{label}: {where} sees no key, yet its weights are not zero. {why}", label=c.label,
                          where=where, why=blind_why(fix)))
    weights = torch.as_tensor(np.asarray(weights, dtype=np.float64)) if not isinstance(weights, torch.Tensor) else weights
    if torch.allclose(weights, torch.full_like(weights, 1 / weights.numel())):
        return FollowUp(t("{label}: {where} sees no key, yet its weights are spread evenly over the hidden keys: a "
                          "large negative fill such as -1e9 (the Annotated Transformer's) turns such a row uniform. "
                          "{why}", label=c.label, where=where, why=blind_why(fix)))
    return FollowUp(t("{label}: {where} sees no key, yet its weights are {weights}. {why}", label=c.label, where=where,
                      weights=[round(x, 3) for x in weights.tolist()], why=blind_why(fix)))


def blind_query_gets_zero(c, out, attn, expected, b: int = 1, i: int = 2) -> None:
    """Query i of batch item b sees no key: zero weights, no NaN, and an output of W_o's bias (expected:
    reference out). A follow-up for every caller, never a core failure: it raises FollowUp."""
    row_w, row_o = attn[b, :, i], out[b, i]
    where = t("batch {b}, query {i}", b=b, i=i)
    if torch.isnan(row_w).any() or torch.isnan(row_o).any():
        raise blind_verdict(c, where, nan=True)
    if (row_w != 0).any():
        raise blind_verdict(c, t("batch {b}, query {i}, head 0,", b=b, i=i), nan=False, weights=row_w[0])
    others = torch.ones(out.shape[:2], dtype=torch.bool)
    others[b, i] = False
    if torch.allclose(out[others], expected[others], rtol=1e-9, atol=1e-10) and not torch.allclose(
            row_o, expected[b, i], rtol=1e-9, atol=1e-10):
        raise FollowUp(t("{label}: {where} sees no key and its weights are zero, but its output is not W_o's bias: "
                         "compute the output from the zeroed weights (attn @ V), so the attention gives 0. {why}",
                         label=c.label, where=where, why=blind_why()))


# ----------------------------------------------------------------------------- NumPy attention (output, weights)

NAMES = ("output", "attention_weights")


def large_scores_stay_finite(kit, c, args, pair, scaled: str) -> None:
    """Scores of ~1000 (args scaled by 30): no NaN or inf, and still the reference's result.

    pair(value, c) -> (output, attention_weights); scaled says what was scaled ("q and k times 30").
    """
    out, weights = pair(kit.user(args, case=c), c)
    if not (np.isfinite(out).all() and np.isfinite(weights).all()):
        raise Fail(t("{label}, {scaled}: your result has NaN or inf", label=c.label, scaled=t(scaled)),
                   t("exp of a score above 709 overflows: subtract each row's max before np.exp (the numpy/softmax "
                     "kata)"))
    for name, got, want in zip(NAMES, (out, weights), kit.reference(args, case=c)):
        try:
            compare(got, want, name)
        except Fail as fail:
            raise Fail(t("{label}, {scaled}: {fail}", label=c.label, scaled=t(scaled), fail=fail)) from None


def float32_kept(kit, cases, scale: str) -> None:
    """float32 inputs give float32 outputs; scale names the size under the root (d_k, depth)."""
    for c in cases:
        got = kit.user(kit.inputs(c, "float32"), case=c, dtype="float32")
        for name, value in zip(NAMES, got if isinstance(got, (tuple, list)) else ()):
            if isinstance(value, np.ndarray) and value.dtype == np.float64:  # values: the float32 numerics check
                raise FollowUp(t("{label}: float32 inputs gave a float64 {name} (a follow-up: memory doubles and every "
                                 "later step slows). np.sqrt({scale}) is a float64 NumPy scalar and, since NumPy 2, it "
                                 "turns float32 arrays into float64: divide by math.sqrt({scale}) (a Python float) or "
                                 "by np.sqrt({scale}).astype(q.dtype); an additive mask such as mask * -1e9 is float64 "
                                 "too: use np.where(mask, scores, -np.inf)", label=c.label, name=name, scale=scale))


def layer_survives_large_scores(kit, c, args, at: tuple, names: str, legend: str) -> None:
    """A NumPy layer given W_q and W_k times 40 (args[at]): scores in the thousands must not overflow.

    Run only when the layer is right on ordinary inputs (else the numerics check has already said
    what is wrong, with its diagnosis). names: the two weights as the kata calls them.
    """
    def same(args) -> bool:
        try:
            compare(kit.user(args), kit.reference(args), "output", tol=kit.tolerance("float64"))
            return True
        except Fail:
            return False

    if not same(args):
        return
    args = tuple(a * 40.0 if i in at else a for i, a in enumerate(args))
    got = kit.user(args)
    if isinstance(got, np.ndarray) and not np.all(np.isfinite(got)):
        raise Fail(t("{label}, {names} scaled by 40: the output holds NaN or inf. exp() of scores in the thousands "
                     "overflows: softmax must subtract each row's max first (the given softmax does)", label=c.label,
                     names=t(names)))
    try:
        compare(got, kit.reference(args), "output", legend, tol=kit.tolerance("float64"))
    except Fail as fail:
        raise Fail(t("{label}, {names} scaled by 40: {fail}. Right on ordinary inputs but not on large scores: softmax "
                     "must subtract each row's max before exp()", label=c.label, names=t(names), fail=fail)) from None


_ZH = register({
    "LLaMA's float32 softmax was recognised (F.softmax(scores.float(), dim=-1).type_as(q)): on float64 input your "
    "weights carry float32 rounding, about 1e-7, and are held to 1e-5 here. This kata's reference keeps the input's "
    "dtype throughout (scores.softmax(dim=-1)); LLaMA upcasts because it runs in float16/bfloat16, where a softmax in "
    "half precision loses digits":
        "识别出了 LLaMA 的 float32 softmax（F.softmax(scores.float(), dim=-1).type_as(q)）：输入为 float64 时，"
        "你的权重带有 float32 的舍入误差（约 1e-7），这里按 1e-5 的容差检查。本题的参考答案始终保持输入的 dtype"
        "（scores.softmax(dim=-1)）；LLaMA 提升精度是因为它运行在 float16/bfloat16 下，半精度的 softmax 会损失有效数字",
    "{label}: forward should return a tuple (out, attn) of tensors":
        "{label}：forward 应该返回由张量组成的元组 (out, attn)",
    "{label}: {name} should have shape {legend} = {want}, got {got}": "{label}：{name} 的形状应为 {legend} = {want}，实际是 {got}",
    "{label}: query {i} gives weight {w:.3g} to hidden key {j} (batch {b}, head {h}); fill hidden scores with -inf "
    "before softmax (True = may attend{advice})": "{label}：查询 {i} 给了被遮挡的键 {j} 权重 {w:.3g}（批次 {b}，第 {h} 个头）；"
                                                  "softmax 之前要把被遮挡的分数填成 -inf（True = 可以关注{advice}）",
    "{label}: changing the inputs after position {pos} changed the output at position ≤ {pos}: the future leaks into "
    "the past: check the mask, the softmax axis (the keys, dim=-1) and that the heads are split and combined with a "
    "transpose": "{label}：改动位置 {pos} 之后的输入，改变了位置 ≤ {pos} 的输出：未来的信息泄漏到了过去：检查掩码、softmax "
                 "的维度（键所在的维度，dim=-1），以及拆分和合并多头时是否用了 transpose",
    "attn.masked_fill(~mask, 0.0) after softmax": "在 softmax 之后做 attn.masked_fill(~mask, 0.0)",
    "np.where(mask, weights, 0.0) after softmax": "在 softmax 之后做 np.where(mask, weights, 0.0)",
    "Follow-up: what should a query that may see no key return (a row of padding, or a causal mask over a left-padded "
    "batch)? A NaN there spreads to the whole batch through the loss and its gradients; this kata's reference gives "
    "zero weights and a zero attention output, e.g. {fix}":
        "追问：一个可能看不到任何键的查询（一整行都是填充，或者左侧填充的批次再加因果掩码）应该返回什么？那里的 NaN 会通过"
        "损失和梯度扩散到整个批次；本题的参考答案让这样的行权重为 0、注意力输出为 0，例如{fix}",
    "{label}: {where} sees no key and came out NaN: softmax over a row that is all -inf (the -inf fill of seed 003) is "
    "0/0. {why}": "{label}：{where}看不到任何键，结果是 NaN：对一整行 -inf 做 softmax（seed 003 的 -inf 填充）就是 0/0。{why}",
    "{label}: {where} sees no key, yet its weights are not zero. {why}":
        "{label}：{where}看不到任何键，它的权重却不为 0。{why}",
    "{label}: {where} sees no key, yet its weights are spread evenly over the hidden keys: a large negative fill such "
    "as -1e9 (the Annotated Transformer's) turns such a row uniform. {why}":
        "{label}：{where}看不到任何键，它的权重却平均分给了被遮挡的键：像 -1e9 这样的大负数填充（Annotated Transformer "
        "的写法）会让这样的一行变成均匀分布。{why}",
    "{label}: {where} sees no key, yet its weights are {weights}. {why}":
        "{label}：{where}看不到任何键，它的权重却是 {weights}。{why}",
    "batch {b}, query {i}": "批次 {b} 的查询 {i}",
    "batch {b}, query {i}, head 0,": "批次 {b} 的查询 {i}（第 0 个头）",
    "{label}: {where} sees no key and its weights are zero, but its output is not W_o's bias: compute the output from "
    "the zeroed weights (attn @ V), so the attention gives 0. {why}":
        "{label}：{where}看不到任何键，权重是 0，但输出不等于 W_o 的偏置：要用清零后的权重计算输出（attn @ V），这样注意力"
        "部分给出 0。{why}",
    "{label}, {scaled}: your result has NaN or inf": "{label}，{scaled}：你的结果里有 NaN 或 inf",
    "exp of a score above 709 overflows: subtract each row's max before np.exp (the numpy/softmax kata)":
        "分数超过 709 时 exp 会溢出：在 np.exp 之前先减去每行的最大值（见 numpy/softmax 练习）",
    "{label}, {scaled}: {fail}": "{label}，{scaled}：{fail}",
    "q and k times 30": "q 和 k 乘以 30",
    "Wq and Wk times 30": "Wq 和 Wk 乘以 30",
    "{label}: float32 inputs gave a float64 {name} (a follow-up: memory doubles and every later step slows). "
    "np.sqrt({scale}) is a float64 NumPy scalar and, since NumPy 2, it turns float32 arrays into float64: divide by "
    "math.sqrt({scale}) (a Python float) or by np.sqrt({scale}).astype(q.dtype); an additive mask such as mask * -1e9 "
    "is float64 too: use np.where(mask, scores, -np.inf)":
        "{label}：float32 的输入得到了 float64 的 {name}（这是追问：内存翻倍，后面每一步都变慢）。np.sqrt({scale}) 是 "
        "float64 的 NumPy 标量，从 NumPy 2 起它会把 float32 数组变成 float64：请除以 math.sqrt({scale})（Python 的 "
        "float），或者除以 np.sqrt({scale}).astype(q.dtype)；mask * -1e9 这样的加性掩码也是 float64：请用 "
        "np.where(mask, scores, -np.inf)",
    "{label}, {names} scaled by 40: the output holds NaN or inf. exp() of scores in the thousands overflows: softmax "
    "must subtract each row's max first (the given softmax does)":
        "{label}，{names} 乘以 40：输出里有 NaN 或 inf。分数上千时 exp() 会溢出：softmax 必须先减去每行的最大值（给定的 "
        "softmax 就是这样做的）",
    "{label}, {names} scaled by 40: {fail}. Right on ordinary inputs but not on large scores: softmax must subtract "
    "each row's max before exp()": "{label}，{names} 乘以 40：{fail}。普通输入上正确，大分数时却不对：softmax 必须在 "
                                   "exp() 之前减去每行的最大值",
    "Wq_msa and Wk_msa": "Wq_msa 和 Wk_msa",
    "Wq_mha and Wk_mha": "Wq_mha 和 Wk_mha",
})
