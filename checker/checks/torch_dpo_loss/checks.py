"""Hidden checks: the DPO loss from per-token log-probabilities (Rafailov et al. 2023, eq. 7)."""

import math

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, UserError, as_outputs, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "dpo_loss"
OUTPUTS = [("loss", "()"), ("chosen_rewards", "(B,)"), ("rejected_rewards", "(B,)")]
BATCH_INDEPENDENT = True  # the rewards of one pair never depend on another pair
GRADIENTS = False  # the gradient check below differentiates the loss only (the rewards are detached)

# Every dimension its own size: B pairs, chosen length T_c != rejected length T_r (so the two masks
# cannot be exchanged), four values of β, the default 0.1 included. Every row has a prompt (mask
# False), a response of its own length, and most have padding; the masked positions hold
# log-probabilities of the same spread as the response, so counting them moves the sums by units.
CASES = [
    case(1, B=3, T_c=7, T_r=5, beta=0.1),
    case(2, B=4, T_c=6, T_r=9, beta=0.5),
    case(3, B=5, T_c=4, T_r=8, beta=2.0),
    case(4, B=2, T_c=11, T_r=3, beta=0.05),
]
TIMING = case(5, B=64, T_c=512, T_r=480, beta=0.1)
# β = 1000 on case 2's log-probabilities: β·z of several hundred to thousands, both signs. Beyond
# |z| ≈ 745 (float64) or 104 (float32) σ(z) rounds to 0 or 1 and log(σ) is -inf; the loss itself
# is ~1e3, so float32 rounding of the inputs alone moves it by ~1e-4 relative.
_LARGE_BETA = 1000.0
_LARGE_TOL = {"float64": (1e-9, 1e-6), "float32": (1e-4, 1e-2)}


def _mask(c, T, salt):
    """Per row: a prompt of 1..T//2 tokens (False), then a response of at least one token, then padding."""
    g = c.generator(salt=salt)
    mask = torch.zeros(c.B, T, dtype=torch.bool)
    for b in range(c.B):
        start = int(torch.randint(1, max(2, T // 2 + 1), (1,), generator=g))
        end = T if b == 0 else int(torch.randint(start + 1, T + 1, (1,), generator=g))
        mask[b, start:end] = True
    return mask


def _logps(c, T, salt):
    """Per-token log-probabilities: negative, of a few units, as a language model gives."""
    return -F.softplus(2.0 * torch.randn(c.B, T, generator=c.generator(salt=salt), dtype=torch.float64))


def inputs(c, dtype, beta=None):
    d = getattr(torch, dtype)
    pol_c, pol_r = _logps(c, c.T_c, 1).to(d), _logps(c, c.T_r, 2).to(d)
    ref_c, ref_r = _logps(c, c.T_c, 3).to(d), _logps(c, c.T_r, 4).to(d)
    return pol_c, pol_r, ref_c, ref_r, _mask(c, c.T_c, 5), _mask(c, c.T_r, 6), c.beta if beta is None else beta


# ----------------------------------------------------------------------------- named mistakes


def _dpo(pol_c, pol_r, ref_c, ref_r, mask_c, mask_r, beta=0.1, *, reduce="sum", swap=False, beta_at="inside",
         log_sigmoid="stable", use_ref=True, batch="mean", sign=1.0, reward_beta=True, reward_swap=False,
         ref_sign=1.0, hinge=False):
    """DPO with knobs; every knob at its default gives the right answer."""

    def seq(x, m):
        if reduce == "sum":
            return (x * m).sum(-1)
        if reduce == "masked mean":
            return (x * m).sum(-1) / m.sum(-1)
        if reduce == "mean over T":
            return (x * m).mean(-1)
        if reduce == "shifted":  # the labels shifted once more, as if logps were still next-token logits
            return (x[:, :-1] * m[:, 1:]).sum(-1)
        return x.sum(-1)  # "unmasked"

    pi_c, pi_r, rc, rr = seq(pol_c, mask_c), seq(pol_r, mask_r), seq(ref_c, mask_c), seq(ref_r, mask_r)
    if not use_ref:
        rc, rr = torch.zeros_like(rc), torch.zeros_like(rr)
    z = (pi_c - pi_r) - ref_sign * (rc - rr)
    z = -z if swap else z
    arg = {"inside": beta * z, "outside": z, "missing": z, "policy only": beta * (pi_c - pi_r) - (rc - rr)}[beta_at]
    if hinge:
        per = torch.relu(1 - arg)
    elif log_sigmoid == "stable":
        per = -F.logsigmoid(arg)
    elif log_sigmoid == "log of sigmoid":
        per = -torch.log(torch.sigmoid(arg))
    else:  # "log1p of exp"
        per = torch.log1p(torch.exp(-arg))
    per = beta * per if beta_at == "outside" else per
    loss = sign * (per.mean() if batch == "mean" else per.sum())
    scale = beta if reward_beta else 1.0
    chosen, rejected = scale * (pi_c - rc), scale * (pi_r - rr)
    return (loss, rejected, chosen) if reward_swap else (loss, chosen, rejected)


def _variant(**knobs):
    def wrong(pol_c, pol_r, ref_c, ref_r, mask_c, mask_r, beta=0.1):
        return _dpo(pol_c, pol_r, ref_c, ref_r, mask_c, mask_r, beta, **knobs)

    return wrong


_UNSTABLE = ("your loss is inf where β·z is a large negative number: log(sigmoid(z)) (or log(1 + exp(-z))) rounds "
             "σ(z) to 0 (exp(-z) to inf) below z ≈ -745 in float64, -104 in float32. Compute -log σ(z) stably: "
             "-F.logsigmoid(beta * z), or F.softplus(-beta * z)")

MISTAKES = [
    Mistake("mean over the response tokens", _variant(reduce="masked mean"),
            "your loss averages the log-probabilities over the response tokens (a length-normalised log π, as "
            "IPO or SimPO do): DPO's log π(y|x) is the SUM over the response tokens, "
            "(logps * mask).sum(-1), so a long response counts every token"),
    Mistake("mean over all T positions", _variant(reduce="mean over T"),
            "your loss divides the masked log-probabilities by the sequence length T ((logps * mask).mean(-1)): "
            "log π(y|x) is the SUM over the response tokens, (logps * mask).sum(-1)"),
    Mistake("mask ignored", _variant(reduce="unmasked"),
            "your loss sums the log-probabilities over every position, prompt and padding included: multiply by "
            "the mask first, (logps * mask).sum(-1), so only the response tokens count"),
    Mistake("β outside the log-sigmoid", _variant(beta_at="outside"),
            "your loss equals -β · log σ(z): β scales the margin INSIDE the sigmoid, -log σ(β · z); outside it only "
            "rescales the loss and its gradient"),
    Mistake("β on the policy terms only", _variant(beta_at="policy only"),
            "your loss scales only the policy's log-ratio by β: β multiplies the whole margin, "
            "β · ((log π(y_c) - log π(y_r)) - (log π_ref(y_c) - log π_ref(y_r)))"),
    Mistake("sum over the pairs", _variant(batch="sum"),
            "your loss is the SUM over the B pairs: the contract (and TRL) take the mean, "
            "-F.logsigmoid(beta * z).mean()"),
    Mistake("reference log-ratio added", _variant(ref_sign=-1.0),
            "your margin ADDS the reference's log-ratio: z = (log π(y_c) - log π(y_r)) - (log π_ref(y_c) - "
            "log π_ref(y_r)), the policy's log-ratio MINUS the reference's"),
    Mistake("hinge loss", _variant(hinge=True),
            "your loss is the hinge max(0, 1 - β · z) (SLiC, TRL's loss_type=\"hinge\"): DPO's loss is the "
            "log-sigmoid, -log σ(β · z) = F.softplus(-β · z)"),
    Mistake("labels shifted again", _variant(reduce="shifted"),
            "your sums pair logps[:, :-1] with mask[:, 1:]: the log-probabilities you are given are already per "
            "token, aligned with the mask (the shift from logits to labels is done), so (logps * mask).sum(-1)"),
    Mistake("log of sigmoid", _variant(log_sigmoid="log of sigmoid"), _UNSTABLE),
    Mistake("log1p of exp", _variant(log_sigmoid="log1p of exp"), _UNSTABLE),
    Mistake("reference ignored", _variant(use_ref=False),
            "your loss ignores the reference model: the margin compares the policy's log-ratio with the "
            "reference's, (log π(y_c) - log π_ref(y_c)) - (log π(y_r) - log π_ref(y_r)); without it DPO loses its "
            "KL anchor to the SFT model"),
]

# Mistakes seen in the rewards alone (the loss right).
_REWARD_MISTAKES = [
    Mistake("rewards without β", _variant(reward_beta=False),
            "your rewards are log π(y) - log π_ref(y) without β: the implicit reward is β · (log π(y) - "
            "log π_ref(y))"),
    Mistake("rewards swapped", _variant(reward_swap=True),
            "your chosen and rejected rewards are exchanged: return (loss, chosen_rewards, rejected_rewards)"),
    Mistake("rewards without the reference", _variant(use_ref=False),
            "your rewards ignore the reference: β · (log π(y) - log π_ref(y))"),
]


def _loss_only(got, wrong):
    return matches(got[0], wrong[0])


def _rewards_only(got, wrong):
    return matches(got[1], wrong[1]) and matches(got[2], wrong[2])


def _outputs(kit, c, args):
    try:
        return as_outputs(kit.user(args), OUTPUTS)
    except Fail as fail:
        raise Fail(t("{label}: {fail}", label=c.label, fail=fail)) from None


# ----------------------------------------------------------------------------- checks


@check("structure", "dpo_loss is a function of the four log-probabilities, the two masks and beta")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["policy_chosen_logps", "policy_rejected_logps",
                                                        "ref_chosen_logps", "ref_rejected_logps", "chosen_mask",
                                                        "rejected_mask", "beta"])


@check("numerics", "the loss is mean(-log σ(β · margin)) with masked sums, on every case")
def loss_value(kit):
    for c in CASES:
        args = kit.inputs(c)
        got = _outputs(kit, c, args)
        try:
            compare(got[0], kit.reference(args)[0], "loss", "()")
        except Fail as fail:
            found = kit.name_mistake(args, got, same=_loss_only, outputs=OUTPUTS)
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message), found or fail.diagnosis) from None


@check("numerics", "the implicit rewards are β · (log π(y) - log π_ref(y)) per pair")
def rewards(kit):
    for c in CASES:
        args = kit.inputs(c)
        got = _outputs(kit, c, args)
        want = kit.reference(args)
        try:
            for (name, legend), u, e in zip(OUTPUTS[1:], got[1:], want[1:]):
                compare(u, e, name, legend)
        except Fail as fail:
            # a right loss: a mistake of the rewards alone; a wrong one: a mistake that gives every output the user's
            found = kit.name_mistake(args, got, _REWARD_MISTAKES, same=_rewards_only, outputs=OUTPUTS) \
                if matches(got[0], want[0]) else kit.name_mistake(args, got, MISTAKES, outputs=OUTPUTS)
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message), found or fail.diagnosis) from None


@check("numerics", "the default β is 0.1: dpo_loss(...) without beta")
def default_beta(kit):
    c = CASES[1]
    args = kit.inputs(c)[:6]
    got, want = _outputs(kit, c, args), kit.reference(args)
    try:
        compare(got[0], want[0], "loss", "()")
    except Fail as fail:
        if not matches(_outputs(kit, c, args + (0.1,))[0], want[0]):  # wrong with beta=0.1 given too: not the default
            raise Fail(t("{label}, called without beta: {fail}; with beta=0.1 passed explicitly the loss differs too, "
                         "so the default is not the cause (see the loss check)", label=c.label, fail=fail)) from None
        raise Fail(t("{label}, called without beta: {fail}; the default is beta=0.1, the paper's and TRL's",
                     label=c.label, fail=fail)) from None


@check("numerics", "stability: β = 1000 (margins β·z in the thousands) gives a finite loss, float64 and float32")
def large_margins(kit):
    c = CASES[1]
    for dtype in ("float64", "float32"):
        args = inputs(c, dtype, beta=_LARGE_BETA)
        got = _outputs(kit, c, args)
        loss = got[0]
        what = t("{label}, {dtype}, beta={beta:g}", label=c.label, dtype=dtype, beta=_LARGE_BETA)
        if isinstance(loss, torch.Tensor) and loss.ndim == 0 and not torch.isfinite(loss):
            found = kit.name_mistake(args, got, same=_loss_only, outputs=OUTPUTS)
            raise Fail(t("{what}: the loss is {loss}", what=what, loss=loss.item()),
                       found or t(_UNSTABLE))
        try:
            compare(loss, kit.reference(args)[0], "loss", "()", tol=_LARGE_TOL[dtype])
        except Fail as fail:
            found = kit.name_mistake(args, got, same=_loss_only, outputs=OUTPUTS)
            raise Fail(t("{what}: {fail}", what=what, fail=fail.message), found or fail.diagnosis) from None


@check("masking", "log-probabilities at prompt and padding positions (mask False) change nothing")
def masked_positions(kit):
    for c in (CASES[0], CASES[2]):
        args = kit.inputs(c)
        pol_c, pol_r, ref_c, ref_r, mask_c, mask_r, beta = args
        g = c.generator(salt=9)
        changed = []
        for x, m in ((pol_c, mask_c), (pol_r, mask_r), (ref_c, mask_c), (ref_r, mask_r)):
            noise = -20 * torch.rand(x.shape, generator=g, dtype=x.dtype)
            changed.append(torch.where(m, x, noise))
        before, after = _outputs(kit, c, args), _outputs(kit, c, (*changed, mask_c, mask_r, beta))
        for (name, legend), b, a in zip(OUTPUTS, before, after):
            if not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor) or a.shape != b.shape:
                return  # the shapes check reports it
            if not matches(a, b):
                raise Fail(t("{label}: changing the log-probabilities where the mask is False (prompt and padding) "
                             "changed the {name}", label=c.label, name=name),
                           kit.name_mistake(args, before, same=_loss_only, outputs=OUTPUTS)
                           or t("only the response tokens count, log π(y|x) = (logps * mask).sum(-1)"))


@check("gradients", "the loss's gradient w.r.t. the policy's log-probabilities matches the reference")
def gradients(kit):
    for c in CASES:
        args = kit.inputs(c)
        want = kit.gradients(c, [torch.tensor(1.0, dtype=torch.float64), torch.zeros(c.B, dtype=torch.float64),
                                 torch.zeros(c.B, dtype=torch.float64)], user=False)
        try:
            got = kit.gradients(c, [torch.tensor(1.0, dtype=torch.float64), torch.zeros(c.B, dtype=torch.float64),
                                    torch.zeros(c.B, dtype=torch.float64)], user=True)
        except UserError as err:
            if err.not_implemented or "does not require grad" not in err.text:
                raise
            raise Fail(t("{label}: your loss has no gradient at all (backward raised \"{error}\")", label=c.label,
                         error=err.message),
                       t("your loss is computed from detached values, e.g. from the detached rewards: compute it from "
                         "the margin before detaching, loss = -F.logsigmoid(beta * z).mean(), and detach only the "
                         "rewards you return, rewards = (beta * ...).detach()"), line=None) from None
        for i, name in enumerate(("policy_chosen_logps", "policy_rejected_logps")):
            u, e = got["args"][i], want["args"][i]
            if u is None:
                raise Fail(t("{label}: no gradient reaches {name}: the loss must stay differentiable in the policy's "
                             "log-probabilities (no .detach(), .item() or torch.no_grad())", label=c.label, name=name))
            try:
                compare(u, e, t("gradient of {name}", name=name))
            except Fail as fail:
                mask = args[4 + i]
                if matches(u[mask], e[mask]) and not matches(u[~mask], e[~mask]):
                    raise Fail(t("{label}: {fail}: the gradient at prompt and padding positions is not 0, so the mask "
                                 "is not applied to every term", label=c.label, fail=fail)) from None
                raise Fail(t("{label}: {fail}", label=c.label, fail=fail)) from None


@check("gradients", "the rewards are detached (logged, not trained on), as TRL and the DPO authors' code do")
def rewards_detached(kit):
    c = CASES[0]
    got = kit.gradients(c, [torch.tensor(0.0, dtype=torch.float64), torch.ones(c.B, dtype=torch.float64),
                            torch.ones(c.B, dtype=torch.float64)], user=True)
    if any(g is not None and bool(g.abs().sum() > 0) for g in got["args"]):
        raise Fail(t("{label}: gradient flows from your rewards into the log-probabilities, where the contract says "
                     "they are DETACHED", label=c.label),
                   t("TRL and the DPO authors' code .detach() the rewards: they are metrics (reward accuracy, margins); "
                     "kept attached they hold the graph alive in the logs, and a reward added to the loss by mistake "
                     "would train the model on it. Return rewards = (beta * ...).detach()"))


@check("properties", "a policy equal to the reference gives loss log 2 and zero rewards")
def policy_is_reference(kit):
    c = CASES[2]
    pol_c, pol_r, _, _, mask_c, mask_r, beta = kit.inputs(c)
    got = _outputs(kit, c, (pol_c, pol_r, pol_c.clone(), pol_r.clone(), mask_c, mask_r, beta))
    compare(got[0], torch.tensor(math.log(2), dtype=torch.float64),
            t("{label}, π = π_ref: loss (the margin is 0, -log σ(0) = log 2)", label=c.label), "()")
    for (name, legend), u in zip(OUTPUTS[1:], got[1:]):
        compare(u, torch.zeros(c.B, dtype=torch.float64), t("{label}, π = π_ref: {name}", label=c.label, name=name),
                legend)
