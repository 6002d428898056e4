"""Hidden checks: PyTorch position-wise feed-forward network (ReLU or GELU)."""

import torch
import torch.nn.functional as F
from torch import nn

from checker.kit import Accepted, Fail, Mistake, UserError, any_leading_axes, case, check, compare, expect_structure, matches
from checker.lang import register, t

TARGET = "FeedForward"
BATCH_INDEPENDENT = True  # the property check: no batch item sees another
OUTPUTS = [("output", "(..., D)")]
DROPOUT = True  # the constructor takes dropout: check it acts in training only

# Every dimension its own size; both activations; inputs of rank 3 and 2 (and 4), so code that
# unpacks B, T, D = x.shape fails; one case with d_ff < d_model, so nothing assumes an expansion.
CASES = [
    case(1, B=2, T=5, D=6, d_ff=16, activation="relu"),
    case(2, T=7, D=4, d_ff=10, activation="gelu"),
    case(3, B=3, T=4, D=8, d_ff=12, activation="gelu"),
    case(4, B=2, N=3, T=5, D=9, d_ff=7, activation="relu"),
]
TIMING = case(5, B=16, T=128, D=256, d_ff=1024, activation="gelu")


def init(c):
    return {"d_model": c.D, "d_ff": c.d_ff, "dropout": 0.0, "activation": c.activation}


def inputs(c, dtype):
    shape = [c.dims[k] for k in ("B", "N", "T") if k in c.dims] + [c.D]
    # spread 1.5: the hidden pre-activations reach ±3, where GELU's approximations differ most
    return (1.5 * torch.randn(shape, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


def _gelu_sigmoid(h):
    return h * torch.sigmoid(1.702 * h)


def _gelu_erf_half(h):
    return 0.5 * h * (1 + torch.erf(h / 2))


def _variant(act=None, *, also_after=False, before=False, residual=False):
    """act: {"relu": fn, "gelu": fn} or one fn for both; None gives the right activation."""
    right = {"relu": F.relu, "gelu": F.gelu}

    class Wrong(nn.Module):
        def __init__(self, d_model, d_ff, dropout=0.0, activation="relu"):
            super().__init__()
            self.fc1, self.fc2 = nn.Linear(d_model, d_ff), nn.Linear(d_ff, d_model)
            chosen = act if act is not None else right
            self.act = chosen[activation] if isinstance(chosen, dict) else chosen

        def forward(self, x):
            if before:
                return self.fc2(self.fc1(self.act(x)))
            out = self.fc2(self.act(self.fc1(x)))
            return x + out if residual else self.act(out) if also_after else out

    return Wrong


MISTAKES = [
    Mistake("GELU tanh approximation", _variant({"relu": F.relu, "gelu": lambda h: F.gelu(h, approximate="tanh")}),
            "your GELU is the tanh approximation 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))): use the exact GELU, "
            "0.5·x·(1 + erf(x/√2)), which is nn.GELU() and F.gelu(x) by default"),
    Mistake("GELU sigmoid approximation", _variant({"relu": F.relu, "gelu": _gelu_sigmoid}),
            "your GELU is the sigmoid approximation x·σ(1.702x): use the exact GELU, 0.5·x·(1 + erf(x/√2)) "
            "(nn.GELU())"),
    Mistake("GELU erf(x/2)", _variant({"relu": F.relu, "gelu": _gelu_erf_half}),
            "your GELU is 0.5·x·(1 + erf(x/2)): the argument of erf is x/√2 (math.sqrt(2)), or use nn.GELU()"),
    Mistake("residual inside", _variant(residual=True),
            "your output is x + FFN(x): the residual connection belongs to the sublayer around the feed-forward "
            "network (AddNorm), which adds it; return fc2(act(fc1(x))) alone"),
    Mistake("always ReLU", _variant(F.relu),
            "your output uses ReLU although activation='gelu' was asked: pick the activation from the "
            "activation argument (nn.GELU() for 'gelu')"),
    Mistake("always GELU", _variant(F.gelu),
            "your output uses GELU although activation='relu' was asked: pick the activation from the "
            "activation argument (nn.ReLU() for 'relu')"),
    Mistake("activation after fc2 too", _variant(also_after=True),
            "you also apply the activation to the output of fc2: FFN(x) = fc2(act(fc1(x))), and fc2's output "
            "is not activated"),
    Mistake("activation before fc1", _variant(before=True),
            "you apply the activation to the input, before fc1: it goes between the layers, fc2(act(fc1(x)))"),
    Mistake("no activation", _variant(lambda h: h),
            "your output has no activation: fc2(fc1(x)) is a single linear map; apply act between fc1 and fc2"),
    Mistake("sigmoid", _variant(torch.sigmoid),
            "your activation is a sigmoid: use ReLU (activation='relu') or the exact GELU (activation='gelu')"),
    Mistake("SiLU", _variant(F.silu),
            "your activation is SiLU/Swish, x·σ(x): use ReLU (activation='relu') or the exact GELU, "
            "0.5·x·(1 + erf(x/√2)) (activation='gelu')"),
    Mistake("tanh", _variant(torch.tanh),
            "your activation is tanh: use ReLU (activation='relu') or the exact GELU (activation='gelu')"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "FeedForward is an nn.Module with fc1 = Linear(d_model, d_ff) and fc2 = Linear(d_ff, d_model)")
def structure(kit):
    settings = {"d_model": 6, "d_ff": 16, "dropout": 0.0, "activation": "gelu"}
    expect_structure(kit, TARGET, module=True, params=["d_model", "d_ff", "dropout", "activation"], forward=["x"])
    built = kit.inspect(TARGET, settings)["parameters"]
    if built.get("fc1.weight") == [6, 16] and built.get("fc2.weight") == [16, 6]:
        raise Fail(t("FeedForward(d_model=6, d_ff=16): fc1 maps d_ff -> d_model and fc2 maps d_model -> d_ff"),
                   t("your fc1 and fc2 are the wrong way round: fc1 = nn.Linear(d_model, d_ff) expands, "
                     "fc2 = nn.Linear(d_ff, d_model) projects back (nn.Linear(in, out) stores its weight as (out, in))"))
    expect_structure(kit, TARGET, module=True, init=settings)


any_rank = any_leading_axes(CASES[0], (CASES[1], CASES[3]))


@check("properties", "dropout sits between the activation and fc2: with p = 1 in training the output is fc2's bias")
def dropout_place(kit):
    c = CASES[0]
    x = kit.inputs(c)[0]
    state = kit.state(c, "float64")
    got = kit.user((x,), case=c, init={**init(c), "dropout": 1.0}, train=True)
    bias = state["fc2.bias"].expand(*x.shape[:-1], c.D)
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != tuple(bias.shape):
        compare(got, bias, t("{label}: output", label=c.label), "(..., D)")  # says what is wrong with its kind or shape
    if matches(got, bias, kit.tolerance("float64")):
        return
    clean = kit.reference((x,), case=c)
    if not matches(kit.user((x,), case=c), clean, kit.tolerance("float64")):
        raise Fail(t("{label}, dropout=1.0 in training mode: the output should be fc2's bias and is not, but the "
                     "output without dropout does not match the reference either: fix that first", label=c.label))
    if matches(got, clean, kit.tolerance("float64")):
        where = t("nothing was dropped: apply self.dropout to the activations")
    elif torch.isnan(got).any():
        where = t("it came out NaN: use nn.Dropout (or F.dropout), which handles p = 1")
    elif (got == 0).all():
        where = t("the output is all zeros, so dropout acts after fc2: apply it to the activations, before fc2")
    else:
        where = t("some hidden units survived or dropout acts elsewhere: build self.dropout from the dropout "
                  "argument and apply it to the activations")
    raise Fail(t("{label}, dropout=1.0 in training mode: every hidden unit is dropped, so the output should be "
                 "fc2's bias; but {where}: fc2(dropout(act(fc1(x)))) (seeds 003 and 004)", label=c.label, where=where))


# d_ff < d_model: fc2's weight (D, d_ff) has full column rank, so the hidden units fc2 received are
# recovered exactly from its output by least squares. GELU: dropout before or after it differs.
_HIDDEN = case(6, B=2, T=5, D=9, d_ff=7, activation="gelu")
_P = 0.5


@check("properties", "dropout acts on the activations: each hidden unit fc2 receives is 0 or act(fc1(x)) / (1 - p)")
def dropout_on_activations(kit):
    c = _HIDDEN
    x, state = kit.inputs(c)[0], kit.state(c, "float64")
    got = kit.user((x,), case=c, init={**init(c), "dropout": _P}, train=True)
    if not isinstance(got, torch.Tensor) or got.shape != x.shape or not torch.isfinite(got).all():
        return  # the shapes and dropout checks say what is wrong
    w1, b1, w2, b2 = (state[k] for k in ("fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"))
    hidden = torch.linalg.lstsq(w2, (got - b2).reshape(-1, c.D).T).solution.T  # (N, d_ff) that fc2 received
    kept = F.gelu(x.reshape(-1, c.D) @ w1.T + b1) / (1 - _P)  # (N, d_ff)
    odd = ~(torch.isclose(hidden, kept, atol=1e-7) | (hidden.abs() < 1e-7))
    if odd.double().mean() > 0.05:
        raise Fail(t("{label}, dropout={p} in training mode: {share:.0%} of the hidden units fc2 receives are neither 0 "
                     "nor act(fc1(x)) / (1 - p)", label=c.label, p=_P, share=float(odd.double().mean())),
                   t("dropout is applied before the activation (or elsewhere): with GELU, act(dropout(h)) differs from "
                     "dropout(act(h)); apply it to the activations, fc2(dropout(act(fc1(x))))"))


@check("hygiene", "an unknown activation ('swish', 'silu', 'tanh', 'sigmoid') raises ValueError when the module is built")
def unknown_activation(kit):
    asserted = False
    for name in ("swish", "silu", "tanh", "sigmoid"):
        settings = {"d_model": 6, "d_ff": 16, "dropout": 0.0, "activation": name}
        try:
            kit.inspect(TARGET, settings)
        except UserError as err:
            if err.not_implemented:
                raise
            if err.kind == "AssertionError":
                asserted = True
            elif err.kind != "ValueError":
                raise Fail(t("FeedForward(6, 16, activation={name}) raised {err}: raise ValueError for an "
                             "activation other than 'relu' or 'gelu'", name=repr(name), err=err)) from None
            continue
        raise Fail(t("FeedForward(6, 16, activation={name}) was built without complaint", name=repr(name)),
                   t("your __init__ accepts any activation: raise ValueError for an activation other than 'relu' or "
                     "'gelu', so a typo cannot silently train with the wrong activation (seed 003: "
                     "raise ValueError('activation must be relu or gelu'))"))
    if asserted:
        raise Accepted(t("an `assert` was recognised (AssertionError) where this kata's reference raises ValueError: "
                         "it stops the same wrong call, but asserts vanish under `python -O`, and then a typo such as "
                         "'gleu' would silently build a model"))


_ZH = register({
    "your GELU is 0.5·x·(1 + erf(x/2)): the argument of erf is x/√2 (math.sqrt(2)), or use nn.GELU()":
        "你的 GELU 是 0.5·x·(1 + erf(x/2))：erf 的参数应为 x/√2（math.sqrt(2)），或者直接用 nn.GELU()",
    "your output is x + FFN(x): the residual connection belongs to the sublayer around the feed-forward "
    "network (AddNorm), which adds it; return fc2(act(fc1(x))) alone":
        "你的输出是 x + FFN(x)：残差连接属于包在前馈网络外面的子层（AddNorm），由它来加；这里只返回 fc2(act(fc1(x)))",
    "dropout acts on the activations: each hidden unit fc2 receives is 0 or act(fc1(x)) / (1 - p)":
        "dropout 作用在激活值上：fc2 收到的每个隐藏单元要么是 0，要么是 act(fc1(x)) / (1 - p)",
    "{label}, dropout={p} in training mode: {share:.0%} of the hidden units fc2 receives are neither 0 "
    "nor act(fc1(x)) / (1 - p)":
        "{label}，训练模式下 dropout={p}：fc2 收到的隐藏单元中有 {share:.0%} 既不是 0，也不是 act(fc1(x)) / (1 - p)",
    "dropout is applied before the activation (or elsewhere): with GELU, act(dropout(h)) differs from "
    "dropout(act(h)); apply it to the activations, fc2(dropout(act(fc1(x))))":
        "dropout 用在了激活函数之前（或别的位置）：对 GELU 来说 act(dropout(h)) 与 dropout(act(h)) 不同；"
        "请把它用在激活值上，fc2(dropout(act(fc1(x))))",
    # titles
    "FeedForward is an nn.Module with fc1 = Linear(d_model, d_ff) and fc2 = Linear(d_ff, d_model)":
        "FeedForward 是一个 nn.Module，带 fc1 = Linear(d_model, d_ff) 和 fc2 = Linear(d_ff, d_model)",
    "dropout sits between the activation and fc2: with p = 1 in training the output is fc2's bias":
        "dropout 位于激活函数和 fc2 之间：训练模式下 p = 1 时输出就是 fc2 的偏置",
    "an unknown activation ('swish', 'silu', 'tanh', 'sigmoid') raises ValueError when the module is built":
        "未知的激活函数（'swish'、'silu'、'tanh'、'sigmoid'）在构建模块时抛出 ValueError",
    # named mistakes
    "your GELU is the tanh approximation 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³))): use the exact GELU, "
    "0.5·x·(1 + erf(x/√2)), which is nn.GELU() and F.gelu(x) by default":
        "你的 GELU 是 tanh 近似 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))：请用精确的 GELU，0.5·x·(1 + erf(x/√2))，"
        "也就是默认的 nn.GELU() 和 F.gelu(x)",
    "your GELU is the sigmoid approximation x·σ(1.702x): use the exact GELU, 0.5·x·(1 + erf(x/√2)) (nn.GELU())":
        "你的 GELU 是 sigmoid 近似 x·σ(1.702x)：请用精确的 GELU，0.5·x·(1 + erf(x/√2))（nn.GELU()）",
    "your output uses ReLU although activation='gelu' was asked: pick the activation from the activation argument "
    "(nn.GELU() for 'gelu')":
        "要求的是 activation='gelu'，你的输出却用了 ReLU：要根据 activation 参数选择激活函数（'gelu' 对应 nn.GELU()）",
    "your output uses GELU although activation='relu' was asked: pick the activation from the activation argument "
    "(nn.ReLU() for 'relu')":
        "要求的是 activation='relu'，你的输出却用了 GELU：要根据 activation 参数选择激活函数（'relu' 对应 nn.ReLU()）",
    "you also apply the activation to the output of fc2: FFN(x) = fc2(act(fc1(x))), and fc2's output is not activated":
        "你对 fc2 的输出也用了激活函数：FFN(x) = fc2(act(fc1(x)))，fc2 的输出不再经过激活",
    "you apply the activation to the input, before fc1: it goes between the layers, fc2(act(fc1(x)))":
        "你在 fc1 之前就对输入用了激活函数：激活函数应该在两层之间，fc2(act(fc1(x)))",
    "your output has no activation: fc2(fc1(x)) is a single linear map; apply act between fc1 and fc2":
        "你的输出没有激活函数：fc2(fc1(x)) 只是一个线性映射；要在 fc1 和 fc2 之间加上 act",
    "your activation is a sigmoid: use ReLU (activation='relu') or the exact GELU (activation='gelu')":
        "你的激活函数是 sigmoid：请用 ReLU（activation='relu'）或精确的 GELU（activation='gelu'）",
    "your activation is SiLU/Swish, x·σ(x): use ReLU (activation='relu') or the exact GELU, 0.5·x·(1 + erf(x/√2)) "
    "(activation='gelu')":
        "你的激活函数是 SiLU/Swish，x·σ(x)：请用 ReLU（activation='relu'）或精确的 GELU，0.5·x·(1 + erf(x/√2))"
        "（activation='gelu'）",
    "your activation is tanh: use ReLU (activation='relu') or the exact GELU (activation='gelu')":
        "你的激活函数是 tanh：请用 ReLU（activation='relu'）或精确的 GELU（activation='gelu'）",
    # messages
    "FeedForward(d_model=6, d_ff=16): fc1 maps d_ff -> d_model and fc2 maps d_model -> d_ff":
        "FeedForward(d_model=6, d_ff=16)：fc1 把 d_ff 映射到 d_model，fc2 把 d_model 映射到 d_ff",
    "your fc1 and fc2 are the wrong way round: fc1 = nn.Linear(d_model, d_ff) expands, "
    "fc2 = nn.Linear(d_ff, d_model) projects back (nn.Linear(in, out) stores its weight as (out, in))":
        "你的 fc1 和 fc2 方向反了：fc1 = nn.Linear(d_model, d_ff) 负责扩展，fc2 = nn.Linear(d_ff, d_model) "
        "负责投影回来（nn.Linear(in, out) 的权重形状是 (out, in)）",
    "{label}: output": "{label}：output",
    "{label}, dropout=1.0 in training mode: the output should be fc2's bias and is not, but the output without "
    "dropout does not match the reference either: fix that first":
        "{label}，训练模式下 dropout=1.0：输出应该是 fc2 的偏置，但不是；不过没有 dropout 时的输出也和参考答案不一致："
        "先修好那个问题",
    "nothing was dropped: apply self.dropout to the activations": "什么都没有被丢弃：要对激活值用 self.dropout",
    "it came out NaN: use nn.Dropout (or F.dropout), which handles p = 1":
        "结果是 NaN：请用 nn.Dropout（或 F.dropout），它能处理 p = 1",
    "the output is all zeros, so dropout acts after fc2: apply it to the activations, before fc2":
        "输出全是 0，说明 dropout 用在了 fc2 之后：要在 fc2 之前用在激活值上",
    "some hidden units survived or dropout acts elsewhere: build self.dropout from the dropout argument and apply it "
    "to the activations":
        "有些隐藏单元没有被丢弃，或者 dropout 用在了别处：请用 dropout 参数构建 self.dropout，并把它用在激活值上",
    "{label}, dropout=1.0 in training mode: every hidden unit is dropped, so the output should be fc2's bias; but "
    "{where}: fc2(dropout(act(fc1(x)))) (seeds 003 and 004)":
        "{label}，训练模式下 dropout=1.0：所有隐藏单元都被丢弃，所以输出应该是 fc2 的偏置；但是{where}："
        "fc2(dropout(act(fc1(x))))（seed 003 和 004）",
    "FeedForward(6, 16, activation={name}) raised {err}: raise ValueError for an activation other than 'relu' or "
    "'gelu'":
        "FeedForward(6, 16, activation={name}) 抛出了 {err}：激活函数不是 'relu' 或 'gelu' 时应抛出 ValueError",
    "FeedForward(6, 16, activation={name}) was built without complaint":
        "FeedForward(6, 16, activation={name}) 顺利构建，没有报错",
    "your __init__ accepts any activation: raise ValueError for an activation other than 'relu' or 'gelu', so a typo "
    "cannot silently train with the wrong activation (seed 003: raise ValueError('activation must be relu or gelu'))":
        "你的 __init__ 接受任何激活函数：激活函数不是 'relu' 或 'gelu' 时要抛出 ValueError，免得拼写错误悄悄地用错误的"
        "激活函数训练（seed 003：raise ValueError('activation must be relu or gelu')）",
    "an `assert` was recognised (AssertionError) where this kata's reference raises ValueError: it stops the same "
    "wrong call, but asserts vanish under `python -O`, and then a typo such as 'gleu' would silently build a model":
        "识别到了 `assert`（AssertionError），而本题的参考答案抛出的是 ValueError：它能拦住同样的错误调用，但在 "
        "`python -O` 下 assert 会消失，那时像 'gleu' 这样的拼写错误就会悄悄地建出一个模型",
})
