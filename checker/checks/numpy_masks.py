"""Hidden checks: NumPy padding and look-ahead (causal) masks.

Two functions and bool outputs, so there is no OUTPUTS: the float32/float64 standard checks would
mean nothing here. The checks below cover shape, dtype, values and hygiene for each function.
"""

import numpy as np
import torch

from checker.lang import register, t
from checker.kit import Fail, Mistake, case, check, compare, describe, expect_structure

TARGET = "make_pad_mask"

# Every dimension its own size. pad_id is a setting, not a size: case 2 uses pad_id=1 and has
# token 0 as a real word, so code that hard-codes 0 fails; case 3 pads on the left.
CASES = [
    case(1, B=3, T=7, pad_id="0", padding="right"),
    case(2, B=2, T=5, pad_id="1", padding="right, token 0 is a real word"),
    case(3, B=4, T=6, pad_id="0", padding="left"),
]
_CAUSAL_CASES = [case(4, T=5), case(5, T=1), case(6, T=8)]

_VOCAB = 20


def inputs(c, dtype=None):
    """(tokens, pad_id): tokens (B, T) int64, real ids drawn from the vocabulary minus pad_id."""
    g = c.generator()
    pad_id = int(c.pad_id)
    tokens = torch.randint(0, _VOCAB - 1, (c.B, c.T), generator=g)
    tokens = tokens + (tokens >= pad_id).long()  # every id but pad_id
    if "token 0" in c.padding:
        tokens[:, 0] = 0  # a real word whose id is 0
    lengths = torch.randint(1, c.T + 1, (c.B,), generator=g)
    lengths[0], lengths[1] = c.T, c.T - 2  # one row without padding, one with two PADs
    position = torch.arange(c.T)
    pad = position >= lengths[:, None] if c.padding.startswith("right") else position < (c.T - lengths)[:, None]
    return tokens.masked_fill(pad, pad_id).numpy(), pad_id


# ----------------------------------------------------------------------------- named mistakes
# Value mistakes are matched on the mask's truth values; shape and dtype mistakes are named by the
# shapes checks (_pad_form, _causal_form), which see the exact shape and dtype.


def _expand(real):
    return real[:, None, None, :]


_PAD_MISTAKES = [
    Mistake("PAD marked True", lambda tokens, pad_id=0: _expand(tokens == pad_id),
            "your mask is True at the PAD tokens: True means 'a real token, may be attended to'; use tokens != pad_id"),
    Mistake("tokens > pad_id", lambda tokens, pad_id=0: _expand(tokens > pad_id),
            "your mask keeps tokens > pad_id: a real token may have a smaller id than pad_id (pad_id=3 and "
            "token 0); compare with !="),
    Mistake("pad_id ignored", lambda tokens, pad_id=0: _expand(tokens != 0),
            "your mask treats id 0 as PAD whatever pad_id says: compare with pad_id (tokens != pad_id)"),
    Mistake("pad_id ignored, inverted", lambda tokens, pad_id=0: _expand(tokens == 0),
            "your mask is True where the id is 0: compare with pad_id, and True marks real tokens (tokens != pad_id)"),
]

_CAUSAL_MISTAKES = [
    Mistake("diagonal hidden", lambda T: np.tril(np.ones((T, T), dtype=bool), k=-1),
            "your mask hides the diagonal: query i must see itself, so keep k=0 (np.tril(np.ones((T, T), dtype=bool)))"),
    Mistake("inverted (seed 002)", lambda T: np.triu(np.ones((T, T), dtype=bool), k=1),
            "your mask is True above the diagonal, the future: that is seed 002's create_causal_mask, where 1 means "
            "hidden; here True means visible, so take the lower triangle, np.tril(np.ones((T, T), dtype=bool))"),
    Mistake("shows the next position", lambda T: np.tril(np.ones((T, T), dtype=bool), k=1),
            "your causal mask also shows the key right after each query (np.tril(..., k=1)): query i sees keys "
            "0..i, np.tril with k=0"),
    Mistake("upper triangle", lambda T: np.triu(np.ones((T, T), dtype=bool)),
            "your mask is the upper triangle: query i sees keys i..T-1, the future; take the lower triangle, np.tril"),
    Mistake("inverted, diagonal hidden", lambda T: ~np.tril(np.ones((T, T), dtype=bool)),
            "your mask is True strictly above the diagonal and hides the diagonal: True means visible, "
            "so use np.tril(np.ones((T, T), dtype=bool)) (diagonal included)"),
    Mistake("nothing hidden", lambda T: np.ones((T, T), dtype=bool),
            "your mask hides nothing: query i must not see keys after i (np.tril)"),
]

MISTAKES = _PAD_MISTAKES + _CAUSAL_MISTAKES  # each list is matched against its own function

_DTYPE_HINT = ("return the bool array itself (tokens != pad_id and np.tril(np.ones((T, T), dtype=bool)) are bool), "
              "with True = visible; 0/1 float masks are seed 000/002's additive convention (1 = hidden)")


def _truth(value, shape):
    """The mask's truth values in the expected shape, when they can be read (else None)."""
    if not isinstance(value, np.ndarray) or value.size != int(np.prod(shape)) or value.dtype.kind not in "biuf":
        return None
    return value.reshape(shape) != 0


def _values(kit, target, args, expected, mistakes, label):
    """Compare the truth values of the user's mask with expected; name the mistake if known."""
    got = kit.user(args, target=target)
    truth = _truth(got, expected.shape)
    if truth is None:
        return  # the shapes check reports it
    try:
        compare(truth, expected, t("{target}{call} (as True/False)", target=target, call=_call(args)), exact=True)
    except Fail as fail:
        found = kit.name_mistake(args, truth, mistakes, run=lambda m: m.impl(*args).reshape(expected.shape),
                                 same=np.array_equal)
        raise Fail(t("{label}: {fail}", label=label, fail=fail), found) from None


def _call(args):
    shown = [f"tokens {tuple(a.shape)}" if isinstance(a, np.ndarray) else repr(a) for a in args]
    return f"({', '.join(shown)})"


# ----------------------------------------------------------------------------- checks


@check("structure", "make_pad_mask(tokens, pad_id) and make_causal_mask(T) are functions")
def structure(kit):
    expect_structure(kit, "make_pad_mask", module=False, params=["tokens", "pad_id"])
    expect_structure(kit, "make_causal_mask", module=False, params=["T"])


@check("shapes", "make_pad_mask returns a bool array (B, 1, 1, T)")
def pad_shape(kit):
    for c in CASES:
        got = kit.user(inputs(c), target="make_pad_mask")
        _pad_form(got, c)


def _pad_form(got, c):
    B, T = c.B, c.T
    if not isinstance(got, np.ndarray):
        raise Fail(t("{label}: make_pad_mask should return a NumPy array, got {got}", label=c.label, got=describe(got)))
    shape = tuple(got.shape)
    hints = {
        (B, T): "that is (B, T): add the head and query axes, real[:, None, None, :], so the mask broadcasts "
                "against the scores (B, H, T_q, T_k)",
        (B, 1, T): "that is (B, 1, T), seed 004's make_src_mask (its attention adds the head axis later, with "
                   "mask.unsqueeze(1)); against scores (B, H, T_q, T_k) it would line B up with the head axis: "
                   "add both axes here, real[:, None, None, :]",
        (B, 1, T, 1): "the tokens sit on the query axis; padding hides KEYS, the last axis: (B, 1, 1, T)",
        (B, T, 1, 1): "the tokens sit on the head axis; padding hides KEYS, the last axis: (B, 1, 1, T)",
    }
    if shape != (B, 1, 1, T):
        hint = hints.get(shape, "")
        raise Fail(t("{label}: the mask should have shape (B, 1, 1, T) = {want}, got {got}", label=c.label,
                     want=(B, 1, 1, T), got=shape), t(hint) if hint else None)
    if got.dtype != np.bool_:
        raise Fail(t("{label}: the mask should have dtype bool, got numpy.{dtype}", label=c.label, dtype=got.dtype),
                   t(_DTYPE_HINT))


@check("shapes", "make_causal_mask returns a bool array (T, T)")
def causal_shape(kit):
    for c in _CAUSAL_CASES:
        got = kit.user((c.T,), target="make_causal_mask")
        if not isinstance(got, np.ndarray):
            raise Fail(t("{label}: make_causal_mask should return a NumPy array, got {got}", label=c.label,
                         got=describe(got)))
        if tuple(got.shape) != (c.T, c.T):
            if got.size == c.T * c.T:
                raise Fail(t("{label}: the mask should have shape (T, T) = {want}, got {got}; return (T, T): "
                             "broadcasting adds the batch and head axes when the mask meets the scores",
                             label=c.label, want=(c.T, c.T), got=tuple(got.shape)))
            raise Fail(t("{label}: the mask should have shape (T, T) = {want}, got {got}", label=c.label,
                         want=(c.T, c.T), got=tuple(got.shape)))
        if got.dtype != np.bool_:
            raise Fail(t("{label}: the mask should have dtype bool, got numpy.{dtype}", label=c.label, dtype=got.dtype),
                       t(_DTYPE_HINT))


@check("masking", "make_pad_mask is True at real tokens and False at PAD (whatever pad_id is)")
def pad_values(kit):
    solution = kit.solution.make_pad_mask
    for c in CASES:
        args = inputs(c)
        _values(kit, "make_pad_mask", args, solution(*args), _PAD_MISTAKES, c.label)
    tokens, _ = inputs(CASES[0])
    _values(kit, "make_pad_mask", (tokens,), solution(tokens), _PAD_MISTAKES,
            t("{label}, called without pad_id (the default is pad_id=0)", label=CASES[0].label))


@check("masking", "make_causal_mask lets query i see keys 0..i, itself included")
def causal_values(kit):
    for c in _CAUSAL_CASES:
        _values(kit, "make_causal_mask", (c.T,), kit.solution.make_causal_mask(c.T), _CAUSAL_MISTAKES, c.label)


@check("hygiene", "make_pad_mask leaves the caller's tokens unchanged")
def hygiene(kit):
    for c in CASES:
        sent = inputs(c)
        _, after = kit.user(sent, target="make_pad_mask", return_args=True)
        try:
            compare(after[0], sent[0], "tokens", exact=True)
        except Fail as fail:
            raise Fail(t("{label}: your code modified its input ({fail}); build a new array (tokens != pad_id) instead "
                         "of writing into tokens", label=c.label, fail=fail)) from None


_ZH = register({
    # case settings, shown in the case labels
    "right, token 0 is a real word": "right（右侧填充），token 0 是真实的词",
    "your causal mask also shows the key right after each query (np.tril(..., k=1)): query i sees keys "
    "0..i, np.tril with k=0":
        "你的因果掩码还露出了每个查询后面紧挨着的那个键（np.tril(..., k=1)）：查询 i 只能看到键 0..i，np.tril 用 k=0",
    "make_pad_mask(tokens, pad_id) and make_causal_mask(T) are functions":
        "make_pad_mask(tokens, pad_id) 和 make_causal_mask(T) 都是函数",
    "make_pad_mask returns a bool array (B, 1, 1, T)": "make_pad_mask 返回 bool 数组 (B, 1, 1, T)",
    "make_causal_mask returns a bool array (T, T)": "make_causal_mask 返回 bool 数组 (T, T)",
    "make_pad_mask is True at real tokens and False at PAD (whatever pad_id is)":
        "make_pad_mask 在真实 token 处为 True，在 PAD 处为 False（无论 pad_id 是多少）",
    "make_causal_mask lets query i see keys 0..i, itself included": "make_causal_mask 让查询 i 看到键 0..i，包括它自己",
    "make_pad_mask leaves the caller's tokens unchanged": "make_pad_mask 不修改调用者传入的 tokens",
    "your mask is True at the PAD tokens: True means 'a real token, may be attended to'; use tokens != pad_id":
        "你的掩码在 PAD token 处为 True：True 表示“真实 token，可以被关注”；请用 tokens != pad_id",
    "your mask treats id 0 as PAD whatever pad_id says: compare with pad_id (tokens != pad_id)":
        "不管 pad_id 是多少，你的掩码都把 id 0 当成 PAD：要和 pad_id 比较（tokens != pad_id）",
    "your mask is True where the id is 0: compare with pad_id, and True marks real tokens (tokens != pad_id)":
        "你的掩码在 id 为 0 的地方为 True：要和 pad_id 比较，并且 True 标记的是真实 token（tokens != pad_id）",
    "your mask hides the diagonal: query i must see itself, so keep k=0 (np.tril(np.ones((T, T), dtype=bool)))":
        "你的掩码遮挡了对角线：查询 i 必须能看到它自己，所以保持 k=0（np.tril(np.ones((T, T), dtype=bool))）",
    "your mask is True above the diagonal, the future: that is seed 002's create_causal_mask, where 1 means hidden; "
    "here True means visible, so take the lower triangle, np.tril(np.ones((T, T), dtype=bool))":
        "你的掩码在对角线以上（也就是未来）为 True：这是 seed 002 的 create_causal_mask，那里 1 表示遮挡；本题 True 表示"
        "可见，所以要取下三角，np.tril(np.ones((T, T), dtype=bool))",
    "your mask is the upper triangle: query i sees keys i..T-1, the future; take the lower triangle, np.tril":
        "你的掩码是上三角：查询 i 看到的是键 i..T-1，也就是未来；要取下三角，np.tril",
    "your mask is True strictly above the diagonal and hides the diagonal: True means visible, so use "
    "np.tril(np.ones((T, T), dtype=bool)) (diagonal included)":
        "你的掩码在严格对角线以上为 True，并且遮挡了对角线：True 表示可见，所以要用 "
        "np.tril(np.ones((T, T), dtype=bool))（包括对角线）",
    "your mask hides nothing: query i must not see keys after i (np.tril)":
        "你的掩码什么都没遮挡：查询 i 不能看到 i 之后的键（np.tril）",
    _DTYPE_HINT: "返回 bool 数组本身（tokens != pad_id 和 np.tril(np.ones((T, T), dtype=bool)) 都是 bool），True = 可见；"
                 "0/1 的浮点掩码是 seed 000/002 的加性约定（1 = 遮挡）",
    "{target}{call} (as True/False)": "{target}{call}（按 True/False 比较）",
    "{label}: {fail}": "{label}：{fail}",
    "{label}: make_pad_mask should return a NumPy array, got {got}": "{label}：make_pad_mask 应该返回 NumPy 数组，实际得到 {got}",
    "that is (B, T): add the head and query axes, real[:, None, None, :], so the mask broadcasts against the scores "
    "(B, H, T_q, T_k)": "这是 (B, T)：要加上头和查询两个维度，real[:, None, None, :]，这样掩码才能和分数 (B, H, T_q, T_k) 广播",
    "that is (B, 1, T), seed 004's make_src_mask (its attention adds the head axis later, with mask.unsqueeze(1)); "
    "against scores (B, H, T_q, T_k) it would line B up with the head axis: add both axes here, real[:, None, None, :]":
        "这是 (B, 1, T)，seed 004 的 make_src_mask（它的注意力之后再用 mask.unsqueeze(1) 加上头的维度）；和分数 "
        "(B, H, T_q, T_k) 广播时，B 会对上头的维度：要在这里把两个维度都加上，real[:, None, None, :]",
    "the tokens sit on the query axis; padding hides KEYS, the last axis: (B, 1, 1, T)":
        "token 放在了查询维度上；填充遮挡的是【键】，也就是最后一维：(B, 1, 1, T)",
    "the tokens sit on the head axis; padding hides KEYS, the last axis: (B, 1, 1, T)":
        "token 放在了头的维度上；填充遮挡的是【键】，也就是最后一维：(B, 1, 1, T)",
    "{label}: the mask should have shape (B, 1, 1, T) = {want}, got {got}":
        "{label}：掩码的形状应为 (B, 1, 1, T) = {want}，实际是 {got}",
    "{label}: the mask should have dtype bool, got numpy.{dtype}":
        "{label}：掩码的 dtype 应为 bool，实际是 numpy.{dtype}",
    "{label}: make_causal_mask should return a NumPy array, got {got}":
        "{label}：make_causal_mask 应该返回 NumPy 数组，实际得到 {got}",
    "{label}: the mask should have shape (T, T) = {want}, got {got}; return (T, T): broadcasting adds the batch and "
    "head axes when the mask meets the scores": "{label}：掩码的形状应为 (T, T) = {want}，实际是 {got}；请返回 (T, T)："
                                                "掩码和分数相遇时，广播会自动补上批次和头的维度",
    "{label}: the mask should have shape (T, T) = {want}, got {got}": "{label}：掩码的形状应为 (T, T) = {want}，实际是 {got}",
    "{label}, called without pad_id (the default is pad_id=0)": "{label}，调用时不传 pad_id（默认 pad_id=0）",
    "{label}: your code modified its input ({fail}); build a new array (tokens != pad_id) instead of writing into "
    "tokens": "{label}：你的代码修改了它的输入（{fail}）；请新建一个数组（tokens != pad_id），不要写进 tokens",
})
