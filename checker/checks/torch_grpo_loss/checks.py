"""Hidden checks: GRPO's group-normalised advantages and its clipped, k3-penalised loss (DeepSeekMath)."""

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, UserError, at_line, case, check, compare, expect_structure, matches
from checker.lang import t

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
            "min of ratios": lambda: torch.min(r, r.clamp(1 - clip_eps, 1 + clip_eps)) * A,
            "product": lambda: torch.min(plain, plain.clamp(1 - clip_eps, 1 + clip_eps)),
            "product only": lambda: plain.clamp(1 - clip_eps, 1 + clip_eps)}[clip]()
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
    Mistake("clip on ratio·A", _variant(clip="product"),
            "your surrogate is min(ratio·A, clamp(ratio·A, 1 - ε, 1 + ε)): the clip is applied to the product ratio·A, "
            "but the range [1 - ε, 1 + ε] bounds the probability RATIO; clip the ratio, then multiply: "
            "min(ratio·A, clamp(ratio, 1 - ε, 1 + ε)·A)"),
    Mistake("clip on ratio·A, no min", _variant(clip="product only"),
            "your surrogate is clamp(ratio·A, 1 - ε, 1 + ε): the clip is applied to the product ratio·A, but the "
            "range [1 - ε, 1 + ε] bounds the probability RATIO; clip the ratio, multiply, and take the min with the "
            "unclipped term: min(ratio·A, clamp(ratio, 1 - ε, 1 + ε)·A)"),
    Mistake("k1 instead of k3", _variant(kl="k1"),
            "your KL term is logps - ref_logps (the k1 estimator, which can be negative): GRPO uses k3, "
            "exp(ref - logp) - (ref - logp) - 1, unbiased and never negative"),
    Mistake("k2 instead of k3", _variant(kl="k2"),
            "your KL term is ½(logp - ref)², the k2 estimator: GRPO uses k3, exp(ref - logp) - (ref - logp) - 1"),
    Mistake("β ignored", _variant(kl_sign=0.0),
            "your loss has no KL penalty: add β·KL per token, -(surrogate - beta * kl)"),
    Mistake("ratio as a quotient of log-probabilities", _variant(ratio="quotient"),
            "your ratio is logps / old_logps, a quotient of LOG-probabilities: the probability ratio is "
            "π_θ/π_θ_old = exp(logps - old_logps)"),
    Mistake("token-level mean over the batch", _variant(reduce="token"),
            "your loss is the mean over ALL tokens of the batch (TRL's loss_type=\"bnpo\", DAPO's token-level "
            "loss): GRPO as in DeepSeekMath averages over each completion's tokens first, then over the "
            "completions, ((per_token * mask).sum(1) / mask.sum(1)).mean()"),
    Mistake("divided by T", _variant(reduce="T"),
            "your loss divides each completion's sum by the padded length T (Dr. GRPO's constant normaliser): "
            "GRPO divides by the completion's own number of tokens, mask.sum(1)"),
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
                raise Fail(t("{label}, {dtype}: {fail}", label=c.label, dtype=dtype, fail=fail.message), found or fail.diagnosis) from None


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
