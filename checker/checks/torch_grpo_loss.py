"""Hidden checks: GRPO's group-normalised advantages and its clipped, k3-penalised loss (DeepSeekMath)."""

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, UserError, at_line, case, check, compare, expect_structure, matches
from checker.lang import register, t

TARGET = "grpo_loss"
OUTPUTS = [("loss", "()")]
GRADIENTS = False  # the gradient check below differentiates w.r.t. logps only (old and ref come without graph)

# Every dimension its own size; four clip ranges and β values, β = 0 once (TRL's current default) and
# β = 1 once, so a wrong KL term moves the loss by tenths. old_logps differ from logps by 0.35·randn,
# so ratios spread over ~[0.5, 2]: about half the tokens are clipped, on both sides, for advantages of
# both signs (min and max, clipped and unclipped, all differ). Every completion has its own length,
# row 0 is full, the others right-padded; padding positions hold log-probabilities too.
CASES = [
    case(1, N=6, T=5, clip_eps=0.2, beta=0.04),
    case(2, N=4, T=9, clip_eps=0.1, beta=0.1),
    case(3, N=8, T=3, clip_eps=0.28, beta=1.0),
    case(4, N=3, T=7, clip_eps=0.2, beta=0.0),
]
TIMING = case(5, N=64, T=512, clip_eps=0.2, beta=0.04)

# group_advantages: P prompts of G completions. Binary rewards (a verifier's 0/1) with a group whose
# rewards are all equal, continuous rewards, G = 2; one eps large enough (0.1) that ignoring it shows.
_ADV_CASES = [
    case(11, P=3, G=4, eps=1e-4, rewards="0/1 from a verifier, group 1 all correct"),
    case(12, P=2, G=5, eps=0.1, rewards="continuous: 2·randn + 1"),
    case(13, P=4, G=2, eps=1e-4, rewards="continuous: randn"),
    case(14, P=5, G=3, eps=1e-4, rewards="0/1 from a verifier, group 2 all wrong"),
]


def _mask(c):
    g = c.generator(salt=5)
    lengths = [c.T] + [int(torch.randint(1, c.T + 1, (1,), generator=g)) for _ in range(c.N - 1)]
    return torch.arange(c.T).unsqueeze(0) < torch.tensor(lengths).unsqueeze(1)  # (N, T)


def inputs(c, dtype):
    d = getattr(torch, dtype)
    logps = -F.softplus(2.0 * torch.randn(c.N, c.T, generator=c.generator(salt=1), dtype=torch.float64))
    old = logps + 0.35 * torch.randn(c.N, c.T, generator=c.generator(salt=2), dtype=torch.float64)
    ref = logps + 0.5 * torch.randn(c.N, c.T, generator=c.generator(salt=3), dtype=torch.float64)
    adv = torch.randn(c.N, generator=c.generator(salt=4), dtype=torch.float64)
    return logps.to(d), old.to(d), ref.to(d), adv.to(d), _mask(c), c.clip_eps, c.beta


def _rewards(c, dtype="float64"):
    g = c.generator(salt=6)
    if c.rewards.startswith("0/1"):
        r = (torch.rand(c.P, c.G, generator=g) < 0.5).to(torch.float64)
        r[0, :2], r[0, 2:] = 1.0, 0.0  # group 0 mixed, whatever the draw
        which = 1 if "group 1" in c.rewards else 2
        r[which] = 1.0 if "correct" in c.rewards else 0.0
    else:
        scale, shift = (2.0, 1.0) if "2·randn" in c.rewards else (1.0, 0.0)
        r = scale * torch.randn(c.P, c.G, generator=g, dtype=torch.float64) + shift
    return r.reshape(-1).to(getattr(torch, dtype))


def _adv_inputs(c, dtype="float64"):
    return _rewards(c, dtype), c.G, c.eps


# ----------------------------------------------------------------------------- named mistakes


def _advantages(rewards, group_size, eps=1e-4, *, per_group=True, std="unbiased", eps_at="outside"):
    """group_advantages with knobs; every knob at its default gives the right answer."""
    if per_group == "strided":  # view(G, -1): every P-th completion in a "group"
        return _advantages(rewards.view(group_size, -1).T.reshape(-1), group_size, eps, std=std,
                           eps_at=eps_at).view(-1, group_size).T.reshape(-1)
    grouped = rewards.view(-1, group_size) if per_group else rewards.view(1, -1)
    mean = grouped.mean(dim=1, keepdim=True)
    if std == "none":
        return (grouped - mean).reshape(-1)
    var = grouped.var(dim=1, keepdim=True, unbiased=(std == "unbiased"))
    scale = var.sqrt() + eps if eps_at == "outside" else (var + eps).sqrt()
    return ((grouped - mean) / scale).reshape(-1)


def _adv_variant(**knobs):
    def wrong(rewards, group_size, eps=1e-4):
        return _advantages(rewards, group_size, eps, **knobs)

    return wrong


_ADV_MISTAKES = [
    Mistake("normalised over the whole batch", _adv_variant(per_group=False),
            "your advantages are normalised with the mean and std of the WHOLE batch: GRPO normalises within each "
            "prompt's group of G completions, rewards.view(-1, group_size).mean(dim=1) and .std(dim=1); that "
            "relative comparison is what replaces PPO's value model"),
    Mistake("groups strided", _adv_variant(per_group="strided"),
            "your groups are every P-th completion (rewards.view(group_size, -1)): the G completions of a prompt are "
            "CONTIGUOUS, rows p·G .. p·G + G - 1, so group with rewards.view(-1, group_size), one row per prompt"),
    Mistake("population std", _adv_variant(std="biased"),
            "your advantages divide by the population std (unbiased=False, divides by G): the contract, like "
            "TRL's rewards.view(-1, G).std(dim=1), uses torch's default unbiased std (divides by G - 1)"),
    Mistake("not divided by the std", _adv_variant(std="none"),
            "your advantages are r - mean(group), not divided by the group's std: that is Dr. GRPO's choice "
            "(TRL's scale_rewards=False); GRPO divides by std(group) + eps"),
    Mistake("eps inside the square root", _adv_variant(eps_at="inside"),
            "your advantages divide by sqrt(var + eps): the contract adds eps to the std, (r - mean) / (std + eps), "
            "as TRL does"),
]


def _grpo(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04, *, pick="min", clip="both",
          kl="k3", kl_sign=1.0, ratio="exp", reduce="sequence", sign=1.0):
    """grpo_loss with knobs; every knob at its default gives the right answer."""
    A = advantages.unsqueeze(1)
    r = {"exp": lambda: torch.exp(logps - old_logps), "quotient": lambda: logps / old_logps,
         "difference": lambda: logps - old_logps, "inverted": lambda: torch.exp(old_logps - logps)}[ratio]()
    plain, clipped = r * A, r.clamp(1 - clip_eps, 1 + clip_eps) * A
    surr = {"both": lambda: (torch.min if pick == "min" else torch.max)(plain, clipped),
            "clipped only": lambda: clipped, "none": lambda: plain,
            "min of ratios": lambda: torch.min(r, r.clamp(1 - clip_eps, 1 + clip_eps)) * A}[clip]()
    d = ref_logps - logps
    k = {"k3": torch.exp(d) - d - 1, "k1": -d, "k3 upside down": torch.exp(-d) + d - 1, "k2": 0.5 * d ** 2}[kl]
    per_token = -(surr - kl_sign * beta * k)
    m = mask.to(per_token.dtype)
    if reduce == "sequence":
        loss = ((per_token * m).sum(1) / m.sum(1).clamp(min=1.0)).mean()
    elif reduce == "token":
        loss = (per_token * m).sum() / m.sum().clamp(min=1.0)
    elif reduce == "T":
        loss = ((per_token * m).sum(1) / per_token.shape[1]).mean()
    else:  # "unmasked"
        loss = per_token.mean()
    return sign * loss


def _variant(**knobs):
    def wrong(logps, old_logps, ref_logps, advantages, mask, clip_eps=0.2, beta=0.04):
        return _grpo(logps, old_logps, ref_logps, advantages, mask, clip_eps, beta, **knobs)

    return wrong


MISTAKES = [
    Mistake("max instead of min", _variant(pick="max"),
            "your surrogate takes the MAX of ratio·A and clip(ratio)·A: PPO's clipped objective takes the MIN, the "
            "pessimistic bound, so that moving the ratio outside [1 - ε, 1 + ε] never pays"),
    Mistake("clipped term only", _variant(clip="clipped only"),
            "your surrogate is clip(ratio, 1 - ε, 1 + ε)·A alone: take min(ratio·A, clip(ratio)·A), so that a ratio "
            "that moved the wrong way is not clipped away"),
    Mistake("min of the ratios, then times A", _variant(clip="min of ratios"),
            "your surrogate is min(ratio, clip(ratio)) · A: the min is taken of the two OBJECTIVES, "
            "min(ratio · A, clip(ratio) · A). With A < 0 the product flips the order, so the pessimistic bound then "
            "picks the larger ratio"),
    Mistake("no clipping", _variant(clip="none"),
            "your surrogate is ratio·A with no clipping: min(ratio·A, clip(ratio, 1 - ε, 1 + ε)·A), PPO's clipped "
            "objective"),
    Mistake("k1 instead of k3", _variant(kl="k1"),
            "your KL term is logps - ref_logps (the k1 estimator, which can be negative): GRPO uses k3, "
            "exp(ref - logp) - (ref - logp) - 1, unbiased and never negative"),
    Mistake("k3 upside down", _variant(kl="k3 upside down"),
            "your KL term is exp(logp - ref) - (logp - ref) - 1, the ratio upside down: DeepSeekMath's k3 is "
            "π_ref/π_θ - log(π_ref/π_θ) - 1 = exp(ref - logp) - (ref - logp) - 1"),
    Mistake("k2 instead of k3", _variant(kl="k2"),
            "your KL term is ½(logp - ref)², the k2 estimator: GRPO uses k3, exp(ref - logp) - (ref - logp) - 1"),
    Mistake("KL added to the objective", _variant(kl_sign=-1.0),
            "your loss REWARDS distance from the reference: the objective is surrogate - β·KL, so the loss to "
            "minimise is -(surrogate - β·KL) = -surrogate + β·KL"),
    Mistake("β ignored", _variant(kl_sign=0.0),
            "your loss has no KL penalty: add β·KL per token, -(surrogate - beta * kl)"),
    Mistake("ratio as a quotient of log-probabilities", _variant(ratio="quotient"),
            "your ratio is logps / old_logps, a quotient of LOG-probabilities: the probability ratio is "
            "π_θ/π_θ_old = exp(logps - old_logps)"),
    Mistake("ratio without exp", _variant(ratio="difference"),
            "your ratio is logps - old_logps, a log-ratio: the probability ratio is its exp, "
            "exp(logps - old_logps)"),
    Mistake("ratio upside down", _variant(ratio="inverted"),
            "your ratio is exp(old_logps - logps) = π_θ_old/π_θ: it is π_θ/π_θ_old = exp(logps - old_logps)"),
    Mistake("mask ignored", _variant(reduce="unmasked"),
            "your loss averages over every position, padding included: sum under the mask and divide by each "
            "completion's own number of tokens"),
    Mistake("token-level mean over the batch", _variant(reduce="token"),
            "your loss is the mean over ALL tokens of the batch (TRL's loss_type=\"bnpo\", DAPO's token-level "
            "loss): GRPO as in DeepSeekMath averages over each completion's tokens first, then over the "
            "completions, ((per_token * mask).sum(1) / mask.sum(1)).mean()"),
    Mistake("divided by T", _variant(reduce="T"),
            "your loss divides each completion's sum by the padded length T (Dr. GRPO's constant normaliser): "
            "GRPO divides by the completion's own number of tokens, mask.sum(1)"),
    Mistake("sign flipped", _variant(sign=-1.0),
            "your loss is the objective itself: minimise its negative, -(surrogate - β·KL)"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "group_advantages(rewards, group_size, eps) and grpo_loss(logps, old_logps, ref_logps, "
                    "advantages, mask, clip_eps, beta) are functions")
def structure(kit):
    expect_structure(kit, "group_advantages", module=False, params=["rewards", "group_size", "eps"])
    expect_structure(kit, TARGET, module=False, params=["logps", "old_logps", "ref_logps", "advantages", "mask",
                                                        "clip_eps", "beta"])


def _user_advantages(kit, c, args):
    return kit.user(args, target="group_advantages")


@check("numerics", "group_advantages: (r - group mean) / (unbiased group std + eps), float64 and float32")
def advantages(kit):
    for dtype in ("float64", "float32"):
        for c in _ADV_CASES:
            args = _adv_inputs(c, dtype)
            got = _user_advantages(kit, c, args)
            want = kit.reference(args, target="group_advantages")
            try:
                compare(got, want, "advantages", "(N,)")
            except Fail as fail:
                found = kit.name_mistake(args, got, _ADV_MISTAKES) if isinstance(got, torch.Tensor) else None
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail), found) from None


@check("numerics", "group_advantages: a group whose rewards are all equal gets advantage 0, not NaN")
def equal_rewards(kit):
    c = _ADV_CASES[0]
    got = _user_advantages(kit, c, _adv_inputs(c))
    if not isinstance(got, torch.Tensor) or tuple(got.shape) != (c.P * c.G,):
        return  # the advantages check reports it
    group = got[c.G:2 * c.G]
    if not torch.equal(group, torch.zeros_like(group)):
        raise Fail(t("{label}: group 1's rewards are all 1, so its std is 0 and its advantages should be exactly 0; "
                     "got {got}", label=c.label, got=[round(v, 4) for v in group.tolist()]),
                   t("add eps to the std, (r - mean) / (std + eps), so 0 / eps = 0"))


@check("numerics", "group_advantages: the default eps is 1e-4 (TRL's)")
def default_eps(kit):
    c = _ADV_CASES[2]
    rewards, G, _ = _adv_inputs(c)
    got = _user_advantages(kit, c, (rewards, G))
    want = kit.reference((rewards, G), target="group_advantages")
    try:
        compare(got, want, "advantages", "(N,)")
    except Fail as fail:
        if not matches(_user_advantages(kit, c, (rewards, G, 1e-4)), want):
            raise Fail(t("{label}, called as group_advantages(rewards, group_size): {fail}; with eps=1e-4 passed "
                         "explicitly they differ too, so the default is not the cause", label=c.label,
                         fail=fail)) from None
        raise Fail(t("{label}, called as group_advantages(rewards, group_size): {fail}; the default is eps=1e-4",
                     label=c.label, fail=fail)) from None


@check("numerics", "grpo_loss: the defaults are clip_eps=0.2 and beta=0.04")
def default_loss_settings(kit):
    c = CASES[2]
    args = kit.inputs(c)[:5]
    got = kit.user(args)
    try:
        compare(got, kit.reference(args), "loss", "()")
    except Fail as fail:
        if not matches(kit.user(args + (0.2, 0.04)), kit.reference(args)):
            raise Fail(t("{label}, called without clip_eps and beta: {fail}; with clip_eps=0.2 and beta=0.04 passed "
                         "explicitly it differs too, so the defaults are not the cause", label=c.label,
                         fail=fail)) from None
        raise Fail(t("{label}, called without clip_eps and beta: {fail}; the defaults are clip_eps=0.2 and beta=0.04 "
                     "(DeepSeekMath's KL coefficient)", label=c.label, fail=fail)) from None


@check("masking", "grpo_loss: log-probabilities at padding positions (mask False) change nothing")
def padding_unused(kit):
    for c in (CASES[1], CASES[2]):
        logps, old, ref, adv, mask, clip_eps, beta = kit.inputs(c)
        g = c.generator(salt=9)
        noisy = [torch.where(mask, x, -30 * torch.rand(x.shape, generator=g, dtype=x.dtype)) for x in (logps, old, ref)]
        before, after = kit.user((logps, old, ref, adv, mask, clip_eps, beta)), kit.user((*noisy, adv, mask, clip_eps,
                                                                                           beta))
        if not isinstance(before, torch.Tensor) or not isinstance(after, torch.Tensor) or before.shape != after.shape:
            return  # the shapes check reports it
        if not matches(after, before):
            raise Fail(t("{label}: changing the log-probabilities at padding positions changed the loss from "
                         "{before:.6g} to {after:.6g}", label=c.label, before=before.item(), after=after.item()),
                       t("a per-token term is not masked: only the completion's tokens count, in the sum and in the "
                         "count you divide by; multiply every per-token term by the mask before summing"))


def _empty_why():
    return t("Follow-up: a completion can end at once (its mask has no True): what does your loss do with 0 tokens? "
             "TRL's loss_type=\"grpo\" divides by mask.sum(1).clamp(min=1), so an empty completion adds 0 to the mean "
             "instead of 0 / 0 = NaN, which would turn every weight into NaN at the next step")


@check("masking", "grpo_loss: a completion with no token (an empty mask row) adds 0, as TRL's clamp(min=1)",
       followup=True)
def empty_completion(kit):
    c = CASES[0]
    logps, old, ref, adv, mask, clip_eps, beta = kit.inputs(c)
    if not matches(kit.user((logps, old, ref, adv, mask, clip_eps, beta)),
                   kit.reference((logps, old, ref, adv, mask, clip_eps, beta))):
        return  # wrong with every completion present: the numerics checks report it, not this question
    mask = mask.clone()
    mask[2] = False
    args = (logps, old, ref, adv, mask, clip_eps, beta)
    try:
        got = kit.user(args)
    except UserError as err:
        if err.not_implemented:
            raise
        raise Fail(t("{label}, completion 2 empty: your code raised {err}{where}. {why}", label=c.label, err=err,
                     where=at_line(err), why=_empty_why())) from None
    if not isinstance(got, torch.Tensor) or got.ndim != 0:
        return  # the shapes check reports it
    if not matches(got, kit.reference(args)):
        raise Fail(t("{label}, completion 2 empty: your loss is {loss:.6g}, the reference's {want:.6g}. {why}",
                     label=c.label, loss=got.item(), want=kit.reference(args).item(), why=_empty_why()))


@check("gradients", "grpo_loss: the gradient w.r.t. logps matches the reference (0 where the clip is active)")
def gradients(kit):
    for c in CASES:
        want = kit.gradients(c, [torch.tensor(1.0, dtype=torch.float64)], user=False)["args"][0]
        got = kit.gradients(c, [torch.tensor(1.0, dtype=torch.float64)], user=True)["args"][0]
        if got is None:
            raise Fail(t("{label}: no gradient reaches logps: the loss must stay differentiable in the policy's "
                         "log-probabilities (no .detach(), .item() or torch.no_grad() on logps)", label=c.label))
        try:
            compare(got, want, t("gradient of {name}", name="logps"))
        except Fail as fail:
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail)) from None


@check("properties", "grpo_loss: on the first step (old_logps = logps) with β = 0 the loss is -mean(A)")
def first_step(kit):
    c = CASES[0]
    logps, _, ref, adv, mask, clip_eps, _ = kit.inputs(c)
    got = kit.user((logps, logps.clone(), ref, adv, mask, clip_eps, 0.0))
    compare(got, -adv.mean(), t("{label}, old_logps = logps, beta=0: loss (the ratio is 1 everywhere, so each "
                                "completion's mean is its advantage)", label=c.label), "()")


@check("hygiene", "group_advantages leaves the caller's rewards unchanged")
def advantages_hygiene(kit):
    c = _ADV_CASES[1]
    sent = _adv_inputs(c)
    _, after = kit.user(sent, target="group_advantages", return_args=True)
    try:
        compare(after[0], sent[0], "rewards", exact=True)
    except Fail as fail:
        raise Fail(t("{label}: group_advantages modified its input ({fail}); write out of place: grouped = "
                     "rewards.view(-1, G), then (grouped - mean) / (std + eps), not grouped -= mean",
                     label=c.label, fail=fail)) from None


_ZH = register({
    "your surrogate is min(ratio, clip(ratio)) · A: the min is taken of the two OBJECTIVES, min(ratio · A, "
    "clip(ratio) · A). With A < 0 the product flips the order, so the pessimistic bound then picks the larger ratio":
        "你的替代目标是 min(ratio, clip(ratio)) · A：min 应该取在两个目标上，min(ratio · A, clip(ratio) · A)。"
        "A < 0 时乘上 A 会把大小关系反过来，这时悲观下界取的是较大的那个比率",
    "your groups are every P-th completion (rewards.view(group_size, -1)): the G completions of a prompt are "
    "CONTIGUOUS, rows p·G .. p·G + G - 1, so group with rewards.view(-1, group_size), one row per prompt":
        "你的分组是每隔 P 个取一个回答（rewards.view(group_size, -1)）：同一个提示词的 G 个回答是连续的，"
        "即第 p·G .. p·G + G - 1 行，所以要用 rewards.view(-1, group_size) 分组，每个提示词一行",
    "{label}, called as group_advantages(rewards, group_size): {fail}; with eps=1e-4 passed explicitly they differ "
    "too, so the default is not the cause":
        "{label}，以 group_advantages(rewards, group_size) 调用：{fail}；显式传入 eps=1e-4 时同样不对，所以问题不在默认值",
    "{label}, called without clip_eps and beta: {fail}; with clip_eps=0.2 and beta=0.04 passed explicitly it differs "
    "too, so the defaults are not the cause":
        "{label}，不传 clip_eps 和 beta 调用：{fail}；显式传入 clip_eps=0.2 和 beta=0.04 时同样不对，所以问题不在默认值",
    # titles
    "group_advantages(rewards, group_size, eps) and grpo_loss(logps, old_logps, ref_logps, advantages, mask, "
    "clip_eps, beta) are functions":
        "group_advantages(rewards, group_size, eps) 和 grpo_loss(logps, old_logps, ref_logps, advantages, mask, "
        "clip_eps, beta) 都是函数",
    "group_advantages: (r - group mean) / (unbiased group std + eps), float64 and float32":
        "group_advantages：(r - 组内均值) / (组内无偏标准差 + eps)，float64 和 float32 下都是如此",
    "group_advantages: a group whose rewards are all equal gets advantage 0, not NaN":
        "group_advantages：奖励全部相等的组，优势为 0，而不是 NaN",
    "group_advantages: the default eps is 1e-4 (TRL's)": "group_advantages：eps 的默认值是 1e-4（TRL 的取值）",
    "grpo_loss: the defaults are clip_eps=0.2 and beta=0.04": "grpo_loss：默认值是 clip_eps=0.2 和 beta=0.04",
    "grpo_loss: log-probabilities at padding positions (mask False) change nothing":
        "grpo_loss：填充位置（掩码为 False）上的对数概率不影响结果",
    "grpo_loss: a completion with no token (an empty mask row) adds 0, as TRL's clamp(min=1)":
        "grpo_loss：没有任何 token 的回答（掩码整行为 False）贡献 0，与 TRL 的 clamp(min=1) 一致",
    "grpo_loss: the gradient w.r.t. logps matches the reference (0 where the clip is active)":
        "grpo_loss：对 logps 的梯度与参考答案一致（裁剪生效的位置梯度为 0）",
    "grpo_loss: on the first step (old_logps = logps) with β = 0 the loss is -mean(A)":
        "grpo_loss：第一步（old_logps = logps）且 β = 0 时，损失等于 -mean(A)",
    # advantage mistakes
    "your advantages are normalised with the mean and std of the WHOLE batch: GRPO normalises within each prompt's "
    "group of G completions, rewards.view(-1, group_size).mean(dim=1) and .std(dim=1); that relative comparison is "
    "what replaces PPO's value model":
        "你的优势是用整个批次的均值和标准差归一化的：GRPO 是在每个提示词的 G 个回答组成的组内归一化，"
        "rewards.view(-1, group_size).mean(dim=1) 和 .std(dim=1)；正是这种组内相对比较取代了 PPO 的价值模型",
    "your advantages divide by the population std (unbiased=False, divides by G): the contract, like TRL's "
    "rewards.view(-1, G).std(dim=1), uses torch's default unbiased std (divides by G - 1)":
        "你的优势除以的是总体标准差（unbiased=False，除以 G）：约定和 TRL 的 rewards.view(-1, G).std(dim=1) 一样，"
        "用 torch 默认的无偏标准差（除以 G - 1）",
    "your advantages are r - mean(group), not divided by the group's std: that is Dr. GRPO's choice (TRL's "
    "scale_rewards=False); GRPO divides by std(group) + eps":
        "你的优势是 r - mean(group)，没有除以组内标准差：这是 Dr. GRPO 的做法（TRL 的 scale_rewards=False）；"
        "GRPO 要除以 std(group) + eps",
    "your advantages divide by sqrt(var + eps): the contract adds eps to the std, (r - mean) / (std + eps), as TRL "
    "does":
        "你的优势除以的是 sqrt(var + eps)：约定是把 eps 加在标准差上，(r - mean) / (std + eps)，与 TRL 一致",
    # loss mistakes
    "your surrogate takes the MAX of ratio·A and clip(ratio)·A: PPO's clipped objective takes the MIN, the "
    "pessimistic bound, so that moving the ratio outside [1 - ε, 1 + ε] never pays":
        "你的替代目标取的是 ratio·A 和 clip(ratio)·A 的最大值：PPO 的裁剪目标取最小值，即悲观的下界，"
        "这样把比率推到 [1 - ε, 1 + ε] 之外永远得不到好处",
    "your surrogate is clip(ratio, 1 - ε, 1 + ε)·A alone: take min(ratio·A, clip(ratio)·A), so that a ratio that "
    "moved the wrong way is not clipped away":
        "你的替代目标只有 clip(ratio, 1 - ε, 1 + ε)·A：要取 min(ratio·A, clip(ratio)·A)，这样往错误方向移动的比率"
        "不会被裁剪掉",
    "your surrogate is ratio·A with no clipping: min(ratio·A, clip(ratio, 1 - ε, 1 + ε)·A), PPO's clipped objective":
        "你的替代目标是没有裁剪的 ratio·A：应为 PPO 的裁剪目标 min(ratio·A, clip(ratio, 1 - ε, 1 + ε)·A)",
    "your KL term is logps - ref_logps (the k1 estimator, which can be negative): GRPO uses k3, exp(ref - logp) - "
    "(ref - logp) - 1, unbiased and never negative":
        "你的 KL 项是 logps - ref_logps（k1 估计量，可能为负）：GRPO 用的是 k3，exp(ref - logp) - (ref - logp) - 1，"
        "无偏且永远不为负",
    "your KL term is exp(logp - ref) - (logp - ref) - 1, the ratio upside down: DeepSeekMath's k3 is π_ref/π_θ - "
    "log(π_ref/π_θ) - 1 = exp(ref - logp) - (ref - logp) - 1":
        "你的 KL 项是 exp(logp - ref) - (logp - ref) - 1，比率颠倒了：DeepSeekMath 的 k3 是 π_ref/π_θ - "
        "log(π_ref/π_θ) - 1 = exp(ref - logp) - (ref - logp) - 1",
    "your KL term is ½(logp - ref)², the k2 estimator: GRPO uses k3, exp(ref - logp) - (ref - logp) - 1":
        "你的 KL 项是 ½(logp - ref)²，即 k2 估计量：GRPO 用的是 k3，exp(ref - logp) - (ref - logp) - 1",
    "your loss REWARDS distance from the reference: the objective is surrogate - β·KL, so the loss to minimise is "
    "-(surrogate - β·KL) = -surrogate + β·KL":
        "你的损失反而鼓励偏离参考模型：目标是 surrogate - β·KL，所以要最小化的损失是 -(surrogate - β·KL) = "
        "-surrogate + β·KL",
    "your loss has no KL penalty: add β·KL per token, -(surrogate - beta * kl)":
        "你的损失没有 KL 惩罚：每个 token 都要加上 β·KL，-(surrogate - beta * kl)",
    "your ratio is logps / old_logps, a quotient of LOG-probabilities: the probability ratio is π_θ/π_θ_old = "
    "exp(logps - old_logps)":
        "你的比率是 logps / old_logps，是对数概率之商：概率比是 π_θ/π_θ_old = exp(logps - old_logps)",
    "your ratio is logps - old_logps, a log-ratio: the probability ratio is its exp, exp(logps - old_logps)":
        "你的比率是 logps - old_logps，这是对数比：概率比是它的指数，exp(logps - old_logps)",
    "your ratio is exp(old_logps - logps) = π_θ_old/π_θ: it is π_θ/π_θ_old = exp(logps - old_logps)":
        "你的比率是 exp(old_logps - logps) = π_θ_old/π_θ：应为 π_θ/π_θ_old = exp(logps - old_logps)",
    "your loss averages over every position, padding included: sum under the mask and divide by each completion's "
    "own number of tokens":
        "你的损失在所有位置上取平均，包括填充：要在掩码下求和，再除以每个回答自己的 token 数",
    "your loss is the mean over ALL tokens of the batch (TRL's loss_type=\"bnpo\", DAPO's token-level loss): GRPO as "
    "in DeepSeekMath averages over each completion's tokens first, then over the completions, ((per_token * "
    "mask).sum(1) / mask.sum(1)).mean()":
        "你的损失是整个批次所有 token 上的平均（TRL 的 loss_type=\"bnpo\"，DAPO 的 token 级损失）：DeepSeekMath 的 "
        "GRPO 先在每个回答的 token 上取平均，再在回答之间取平均，((per_token * mask).sum(1) / mask.sum(1)).mean()",
    "your loss divides each completion's sum by the padded length T (Dr. GRPO's constant normaliser): GRPO divides "
    "by the completion's own number of tokens, mask.sum(1)":
        "你的损失把每个回答的和除以了填充后的长度 T（Dr. GRPO 的常数归一化）：GRPO 除以回答自己的 token 数，mask.sum(1)",
    "your loss is the objective itself: minimise its negative, -(surrogate - β·KL)":
        "你的损失就是目标函数本身：要最小化的是它的相反数，-(surrogate - β·KL)",
    "group_advantages leaves the caller's rewards unchanged": "group_advantages 不修改调用者传入的 rewards",
    "{label}: group_advantages modified its input ({fail}); write out of place: grouped = rewards.view(-1, G), then "
    "(grouped - mean) / (std + eps), not grouped -= mean":
        "{label}：group_advantages 修改了它的输入（{fail}）；请用非原地操作：grouped = rewards.view(-1, G)，"
        "然后 (grouped - mean) / (std + eps)，不要写 grouped -= mean",
    # messages
    "{label}, {dtype}: {fail}": "{label}，{dtype}：{fail}",
    "{label}: group 1's rewards are all 1, so its std is 0 and its advantages should be exactly 0; got {got}":
        "{label}：第 1 组的奖励全是 1，所以标准差为 0，优势应该恰好为 0；实际得到 {got}",
    "add eps to the std, (r - mean) / (std + eps), so 0 / eps = 0":
        "要把 eps 加在标准差上，(r - mean) / (std + eps)，这样 0 / eps = 0",
    "{label}, called as group_advantages(rewards, group_size): {fail}; the default is eps=1e-4":
        "{label}，以 group_advantages(rewards, group_size) 调用：{fail}；默认值是 eps=1e-4",
    "{label}, called without clip_eps and beta: {fail}; the defaults are clip_eps=0.2 and beta=0.04 (DeepSeekMath's "
    "KL coefficient)":
        "{label}，不传 clip_eps 和 beta 调用：{fail}；默认值是 clip_eps=0.2 和 beta=0.04（DeepSeekMath 的 KL 系数）",
    "{label}: changing the log-probabilities at padding positions changed the loss from {before:.6g} to {after:.6g}":
        "{label}：改动填充位置上的对数概率，损失从 {before:.6g} 变成了 {after:.6g}",
    "a per-token term is not masked: only the completion's tokens count, in the sum and in the count you divide by; "
    "multiply every per-token term by the mask before summing":
        "有逐 token 的项没有乘掩码：只有回答的 token 计入，无论是求和还是用来相除的计数；求和之前把每个逐 token 的项都乘上掩码",
    "Follow-up: a completion can end at once (its mask has no True): what does your loss do with 0 tokens? TRL's "
    "loss_type=\"grpo\" divides by mask.sum(1).clamp(min=1), so an empty completion adds 0 to the mean instead of "
    "0 / 0 = NaN, which would turn every weight into NaN at the next step":
        "追问：一个回答可能立刻结束（它的掩码没有 True）：你的损失遇到 0 个 token 时会怎样？TRL 的 loss_type=\"grpo\" "
        "除以 mask.sum(1).clamp(min=1)，所以空回答对平均值贡献 0，而不是 0 / 0 = NaN——NaN 会在下一步让所有权重变成 NaN",
    "{label}, completion 2 empty: your code raised {err}{where}. {why}":
        "{label}，第 2 个回答为空：你的代码抛出了 {err}{where}。{why}",
    "{label}, completion 2 empty: your loss is {loss:.6g}, the reference's {want:.6g}. {why}":
        "{label}，第 2 个回答为空：你的损失是 {loss:.6g}，参考答案是 {want:.6g}。{why}",
    "{label}: no gradient reaches logps: the loss must stay differentiable in the policy's log-probabilities (no "
    ".detach(), .item() or torch.no_grad() on logps)":
        "{label}：梯度传不到 logps：损失对策略模型的对数概率必须可导（不要对 logps 用 .detach()、.item() 或 torch.no_grad()）",
    "{label}, old_logps = logps, beta=0: loss (the ratio is 1 everywhere, so each completion's mean is its advantage)":
        "{label}，old_logps = logps，beta=0：loss（比率处处为 1，所以每个回答的平均值就是它的优势）",
})
