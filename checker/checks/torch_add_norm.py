"""Hidden checks: Add & Norm in both orders, post-LN and pre-LN.

The user's AddNorm.forward(x, sublayer) receives a fixed sublayer from checker.checks.child.sublayers
(pickled into the child with its weights); the reference receives the same one.
"""

import torch
from torch import nn

from checker.checks.child.dropouts import Constant
from checker.checks.child.sublayers import TanhMLP, Zero
from checker.kit import (Fail, Mistake, UserError, case, check, compare, dropout_elsewhere, dropout_missing,
                         expect_structure, matches)
from checker.lang import register, t

TARGET = "AddNorm"
DROPOUT = True  # the constructor takes dropout: check it acts in training only
OUTPUTS = [("output", "(..., D)")]
# The norm, the dropout (in eval mode it passes the sublayer output on) and the given sublayer: the first whose
# input differs is named, and none may be called more often than the reference calls it (the sublayer once).
PARTS = ("sublayer", "norm", "dropout")

# Every dimension its own size; both orders; eps at its default and not; case 1 passes neither
# pre_norm nor eps (the defaults: post-LN, 1e-5); case 5 has no batch axis, x is (T, D).
CASES = [
    case(1, B=2, T=5, D=6, hidden=9, order="post (defaults: pre_norm and eps not passed)"),
    case(2, B=3, T=4, D=8, hidden=5, order="pre", eps=1e-5),
    case(3, B=4, T=3, D=5, hidden=7, order="post", eps=1e-6),
    case(4, B=2, T=6, D=7, hidden=4, order="pre", eps=1e-6),
    case(5, T=7, D=4, hidden=6, order="pre"),
]
TIMING = case(6, B=16, T=64, D=128, hidden=256, order="post")


def _pre(c) -> bool:
    return c.order.startswith("pre")


def init(c):
    kwargs = {"d_model": c.D, "dropout": 0.0}
    if not c.order.endswith("passed)"):
        kwargs["pre_norm"] = _pre(c)
    if "eps" in c.extra:
        kwargs["eps"] = c.eps
    return kwargs


def inputs(c, dtype, sublayer="mlp"):
    dt = getattr(torch, dtype)
    shape = [c.dims[k] for k in ("B", "T") if k in c.dims] + [c.D]
    # mean 0.5 and spread 2 per row, so the LayerNorm really moves x (norm(x) is far from x)
    x = (2.0 * torch.randn(shape, generator=c.generator(), dtype=torch.float64) + 0.5).to(dt)
    layer = TanhMLP(c.D, c.hidden, c.generator(salt=3), dt) if sublayer == "mlp" else Zero()
    return x, layer


# ----------------------------------------------------------------------------- named mistakes


def _wrong(forward, fixed_eps=None):
    """An AddNorm whose forward is forward(self, x, sublayer); fixed_eps overrides the LayerNorm's eps."""

    class Wrong(nn.Module):
        def __init__(self, d_model, pre_norm=False, dropout=0.0, eps=1e-5):
            super().__init__()
            self.pre_norm = pre_norm
            self.norm = nn.LayerNorm(d_model, eps=eps if fixed_eps is None else fixed_eps)

        def forward(self, x, sublayer):
            return forward(self, x, sublayer)

    return Wrong


def _right(m, x, s):
    return x + s(m.norm(x)) if m.pre_norm else m.norm(x + s(x))


MISTAKES = [
    Mistake("pre-LN asked post-LN", _wrong(lambda m, x, s: x + s(m.norm(x))),
            "your output is pre-LN, x + sublayer(norm(x)), but pre_norm=False asks for post-LN (the paper's order): "
            "add first, then normalize the sum, norm(x + dropout(sublayer(x)))"),
    Mistake("post-LN asked pre-LN", _wrong(lambda m, x, s: m.norm(x + s(x))),
            "your output is post-LN, norm(x + sublayer(x)), but pre_norm=True asks for pre-LN: normalize the "
            "sublayer's INPUT and add the raw x, x + dropout(sublayer(norm(x)))"),
    Mistake("pre-LN residual from norm(x)", _wrong(lambda m, x, s: m.norm(x) + s(m.norm(x)) if m.pre_norm else _right(m, x, s)),
            "your pre-LN residual adds norm(x): the residual path carries the raw x, untouched, "
            "x + dropout(sublayer(norm(x))); only the sublayer sees norm(x)"),
    Mistake("norm on both sides", _wrong(lambda m, x, s: m.norm(x + s(m.norm(x)))),
            "your output is norm(x + sublayer(norm(x))): the LayerNorm is applied twice, on the sublayer's input AND "
            "on the sum. Post-LN normalizes only the sum, pre-LN only the sublayer's input"),
    Mistake("post-LN normalized twice", _wrong(lambda m, x, s: _right(m, x, s) if m.pre_norm else m.norm(m.norm(x + s(x)))),
            "your post-LN output is norm(norm(x + sublayer(x))): normalize the sum once"),
    Mistake("pre-LN normalized after the add", _wrong(lambda m, x, s: m.norm(x + s(m.norm(x))) if m.pre_norm else _right(m, x, s)),
            "your pre-LN output is normalized again after the residual add: pre-LN has no norm after the sum, "
            "x + dropout(sublayer(norm(x)))"),
    Mistake("missing residual", _wrong(lambda m, x, s: s(m.norm(x)) if m.pre_norm else m.norm(s(x))),
            "your output has no residual connection: add x back, post-LN norm(x + dropout(sublayer(x))), "
            "pre-LN x + dropout(sublayer(norm(x)))"),
    Mistake("norm of the sublayer output only", _wrong(lambda m, x, s: x + m.norm(s(x))),
            "your output is x + norm(sublayer(x)): the LayerNorm sits on the sublayer's output. Post-LN normalizes "
            "the SUM, norm(x + sublayer(x)); pre-LN normalizes the sublayer's INPUT, x + sublayer(norm(x))"),
    Mistake("eps ignored", _wrong(_right, fixed_eps=1e-5),
            "your LayerNorm ignores the eps argument (nn.LayerNorm(d_model) uses 1e-5): build it with "
            "nn.LayerNorm(d_model, eps=eps)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "AddNorm is an nn.Module with norm = nn.LayerNorm(d_model) and forward(x, sublayer)")
def structure(kit):
    try:
        expect_structure(kit, TARGET, module=True, params=["d_model", "pre_norm", "dropout", "eps"],
                         forward=["x", "sublayer"], init=init(CASES[1]))
    except Fail as fail:
        text = str(fail)
        if text.startswith(f"{TARGET}.forward "):  # forward's parameters, in either language
            text += t(". sublayer is a callable (a module such as the attention or the FFN), not its output as in "
                      "seed 003's ResidualLayerNorm(x, sublayer_out): AddNorm calls it itself, on x or on norm(x)")
        raise Fail(text) from None


@check("shapes", "forward calls sublayer (a callable) and returns a tensor shaped like x")
def calls_sublayer(kit):
    c = CASES[0]
    try:
        value = kit.user(kit.inputs(c), case=c)
    except UserError as err:
        if err.kind == "TypeError" and ("TanhMLP" in err.message or "Module" in err.message):
            raise Fail(t("{label}: your code raised {err}", label=c.label, err=err),
                       t("sublayer is a callable, not a tensor (seed 003's ResidualLayerNorm takes the sublayer's "
                         "OUTPUT; this AddNorm takes the sublayer itself and calls it: sublayer(x) or "
                         "sublayer(self.norm(x))")) from None
        raise
    if not isinstance(value, torch.Tensor):
        raise Fail(t("{label}: forward should return a tensor (..., D), got {kind}", label=c.label,
                     kind=type(value).__name__))


def _zero_sublayer(kit, c, init_kwargs=None, train=False):
    x, zero = inputs(c, "float64", sublayer="zero")
    got = kit.user((x, zero), case=c, init=init_kwargs, train=train)
    state = kit.state(c, "float64")
    norm = nn.LayerNorm(c.D, eps=getattr(c, "eps", 1e-5)).double()
    norm.load_state_dict({k.removeprefix("norm."): v for k, v in state.items()})
    with torch.no_grad():
        want = x.clone() if _pre(c) else norm(x)
    return x, got, want


@check("properties", "with a sublayer that returns 0, pre-LN returns x itself and post-LN returns norm(x)")
def zero_sublayer(kit):
    for c in CASES[:2]:
        x, got, want = _zero_sublayer(kit, c)
        try:
            compare(got, want, "output", "(..., D)", exact=_pre(c))
        except Fail as fail:
            if _pre(c):
                raise Fail(t("{label}: {fail}. With a sublayer that returns zeros, pre-LN gives x + 0 = x exactly: "
                             "the residual path must carry the raw x, with no LayerNorm on it or after the sum",
                             label=c.label, fail=fail)) from None
            raise Fail(t("{label}: {fail}. With a sublayer that returns zeros, post-LN gives norm(x + 0) = norm(x): "
                         "add x and the sublayer's output, then normalize the sum", label=c.label, fail=fail)) from None


@check("properties", "dropout acts on the sublayer's output only: with a zero sublayer, dropout=0.5 changes nothing")
def dropout_placement(kit):
    for c in CASES[:2]:
        x, got, want = _zero_sublayer(kit, c, init_kwargs={**init(c), "dropout": 0.5}, train=True)
        if not matches(got, want):
            where = "x + dropout(sublayer(norm(x)))" if _pre(c) else "norm(x + dropout(sublayer(x)))"
            raise Fail(t("{label}, training mode, dropout=0.5, a sublayer that returns zeros: your output changes, so "
                         "dropout hits x, the sum or the normalized output. Apply it to the sublayer's output only: "
                         "{where}", label=c.label, where=where), dropout_elsewhere())


@check("properties", "dropout acts on the sublayer's output, not its input: with a sublayer that ignores its input, "
                     "dropout=0.5 still changes the result in training")
def dropout_after_the_sublayer(kit):
    for c in CASES[:2]:
        x, _ = kit.inputs(c)
        constant = Constant(torch.randn(x.shape, generator=c.generator(salt=29), dtype=torch.float64))
        trained = kit.user((x, constant), case=c, init={**init(c), "dropout": 0.5}, train=True)
        if matches(trained, kit.reference((x, constant), case=c)):
            where = "x + dropout(sublayer(norm(x)))" if _pre(c) else "norm(x + dropout(sublayer(x)))"
            raise Fail(t("{label}, training mode, dropout=0.5, a sublayer that ignores its input: your output equals the "
                         "result without dropout, so dropout acts before the sublayer (on its input) or nowhere. Apply "
                         "it to the sublayer's output: {where}", label=c.label, where=where),
                       dropout_missing())


@check("properties", "dropout acts in pre-LN too: pre_norm=True, dropout=0.5 in train mode changes the result")
def dropout_pre_ln(kit):
    c = CASES[1]
    args = kit.inputs(c)
    trained = kit.user(args, case=c, init={**init(c), "dropout": 0.5}, train=True)
    if matches(trained, kit.reference(args, case=c)):
        raise Fail(t("{label}: with dropout=0.5 in training mode the pre-LN result equals the result without "
                     "dropout: apply self.dropout to the sublayer's output in the pre-LN branch too, "
                     "x + dropout(sublayer(norm(x)))", label=c.label))


_ZH = register({
    # case settings, shown in the case labels
    "post (defaults: pre_norm and eps not passed)": "post（默认值：不传 pre_norm 和 eps）",
    "dropout acts on the sublayer's output, not its input: with a sublayer that ignores its input, dropout=0.5 still "
    "changes the result in training": "dropout 作用在子层的输出上，而不是输入上：子层不看输入时，训练模式下 dropout=0.5 "
                                      "仍然会改变结果",
    "{label}, training mode, dropout=0.5, a sublayer that ignores its input: your output equals the result without "
    "dropout, so dropout acts before the sublayer (on its input) or nowhere. Apply it to the sublayer's output: {where}":
        "{label}，训练模式，dropout=0.5，子层不看输入：你的输出和没有 dropout 时一样，说明 dropout 用在了子层之前（它的输入上）"
        "或者根本没用。请把它用在子层的输出上：{where}",
    # titles
    "AddNorm is an nn.Module with norm = nn.LayerNorm(d_model) and forward(x, sublayer)":
        "AddNorm 是一个 nn.Module，带 norm = nn.LayerNorm(d_model) 和 forward(x, sublayer)",
    "forward calls sublayer (a callable) and returns a tensor shaped like x":
        "forward 调用 sublayer（一个可调用对象），返回与 x 形状相同的张量",
    "with a sublayer that returns 0, pre-LN returns x itself and post-LN returns norm(x)":
        "子层返回 0 时，pre-LN 返回 x 本身，post-LN 返回 norm(x)",
    "dropout acts on the sublayer's output only: with a zero sublayer, dropout=0.5 changes nothing":
        "dropout 只作用在子层的输出上：子层输出为 0 时，dropout=0.5 不改变任何结果",
    "dropout acts in pre-LN too: pre_norm=True, dropout=0.5 in train mode changes the result":
        "pre-LN 下 dropout 同样起作用：pre_norm=True、train 模式下 dropout=0.5 会改变结果",
    # named mistakes
    "your output is pre-LN, x + sublayer(norm(x)), but pre_norm=False asks for post-LN (the paper's order): add "
    "first, then normalize the sum, norm(x + dropout(sublayer(x)))":
        "你的输出是 pre-LN，x + sublayer(norm(x))，但 pre_norm=False 要求的是 post-LN（论文中的顺序）：先相加，"
        "再对和做层归一化，norm(x + dropout(sublayer(x)))",
    "your output is post-LN, norm(x + sublayer(x)), but pre_norm=True asks for pre-LN: normalize the sublayer's "
    "INPUT and add the raw x, x + dropout(sublayer(norm(x)))":
        "你的输出是 post-LN，norm(x + sublayer(x))，但 pre_norm=True 要求的是 pre-LN：对子层的输入做层归一化，"
        "再加上原始的 x，x + dropout(sublayer(norm(x)))",
    "your pre-LN residual adds norm(x): the residual path carries the raw x, untouched, x + dropout(sublayer(norm(x))); "
    "only the sublayer sees norm(x)":
        "你的 pre-LN 残差连接加的是 norm(x)：残差路径传的是原封不动的 x，x + dropout(sublayer(norm(x)))；"
        "只有子层看到 norm(x)",
    "your output is norm(x + sublayer(norm(x))): the LayerNorm is applied twice, on the sublayer's input AND on the "
    "sum. Post-LN normalizes only the sum, pre-LN only the sublayer's input":
        "你的输出是 norm(x + sublayer(norm(x)))：LayerNorm 用了两次，子层的输入上一次，和上又一次。post-LN 只对和做"
        "层归一化，pre-LN 只对子层的输入做",
    "your post-LN output is norm(norm(x + sublayer(x))): normalize the sum once":
        "你的 post-LN 输出是 norm(norm(x + sublayer(x)))：对和只做一次层归一化",
    "your pre-LN output is normalized again after the residual add: pre-LN has no norm after the sum, "
    "x + dropout(sublayer(norm(x)))":
        "你的 pre-LN 输出在残差相加之后又做了一次层归一化：pre-LN 在求和之后没有归一化，x + dropout(sublayer(norm(x)))",
    "your output has no residual connection: add x back, post-LN norm(x + dropout(sublayer(x))), pre-LN "
    "x + dropout(sublayer(norm(x)))":
        "你的输出没有残差连接：要把 x 加回来，post-LN 是 norm(x + dropout(sublayer(x)))，pre-LN 是 "
        "x + dropout(sublayer(norm(x)))",
    "your output is x + norm(sublayer(x)): the LayerNorm sits on the sublayer's output. Post-LN normalizes the SUM, "
    "norm(x + sublayer(x)); pre-LN normalizes the sublayer's INPUT, x + sublayer(norm(x))":
        "你的输出是 x + norm(sublayer(x))：LayerNorm 放在了子层的输出上。post-LN 对“和”做层归一化，"
        "norm(x + sublayer(x))；pre-LN 对子层的“输入”做层归一化，x + sublayer(norm(x))",
    "your LayerNorm ignores the eps argument (nn.LayerNorm(d_model) uses 1e-5): build it with "
    "nn.LayerNorm(d_model, eps=eps)":
        "你的 LayerNorm 忽略了 eps 参数（nn.LayerNorm(d_model) 用的是 1e-5）：请用 nn.LayerNorm(d_model, eps=eps) 构建",
    # messages
    ". sublayer is a callable (a module such as the attention or the FFN), not its output as in seed 003's "
    "ResidualLayerNorm(x, sublayer_out): AddNorm calls it itself, on x or on norm(x)":
        "。sublayer 是一个可调用对象（比如注意力或前馈网络这样的模块），而不是像 seed 003 的 "
        "ResidualLayerNorm(x, sublayer_out) 那样传入它的输出：AddNorm 自己在 x 或 norm(x) 上调用它",
    "{label}: your code raised {err}": "{label}：你的代码抛出了 {err}",
    "sublayer is a callable, not a tensor (seed 003's ResidualLayerNorm takes the sublayer's OUTPUT; this AddNorm "
    "takes the sublayer itself and calls it: sublayer(x) or sublayer(self.norm(x))":
        "sublayer 是一个可调用对象，不是张量（seed 003 的 ResidualLayerNorm 接收的是子层的输出；本题的 AddNorm "
        "接收子层本身并调用它：sublayer(x) 或 sublayer(self.norm(x))）",
    "{label}: forward should return a tensor (..., D), got {kind}": "{label}：forward 应该返回张量 (..., D)，实际得到 {kind}",
    "{label}: {fail}. With a sublayer that returns zeros, pre-LN gives x + 0 = x exactly: the residual path must carry "
    "the raw x, with no LayerNorm on it or after the sum":
        "{label}：{fail}。子层返回全 0 时，pre-LN 的结果恰好是 x + 0 = x：残差路径必须传原始的 x，它上面和求和之后都不能有 "
        "LayerNorm",
    "{label}: {fail}. With a sublayer that returns zeros, post-LN gives norm(x + 0) = norm(x): add x and the "
    "sublayer's output, then normalize the sum":
        "{label}：{fail}。子层返回全 0 时，post-LN 的结果是 norm(x + 0) = norm(x)：先把 x 和子层的输出相加，再对和做层归一化",
    "{label}, training mode, dropout=0.5, a sublayer that returns zeros: your output changes, so dropout hits x, the "
    "sum or the normalized output. Apply it to the sublayer's output only: {where}":
        "{label}，训练模式，dropout=0.5，子层返回全 0：你的输出变了，说明 dropout 作用在了 x、和或归一化后的输出上。"
        "它只能用在子层的输出上：{where}",
    "{label}: with dropout=0.5 in training mode the pre-LN result equals the result without dropout: apply "
    "self.dropout to the sublayer's output in the pre-LN branch too, x + dropout(sublayer(norm(x)))":
        "{label}：训练模式下 dropout=0.5 时，pre-LN 的结果和没有 dropout 时一样：pre-LN 分支里也要对子层的输出用 "
        "self.dropout，x + dropout(sublayer(norm(x)))",
})
