"""Hidden checks: generalised advantage estimation, GAE(γ, λ) (Schulman et al. 2016, eq. 16)."""

import torch

from checker.kit import Fail, Mistake, as_outputs, case, check, compare, expect_raises, expect_structure, matches
from checker.lang import t

TARGET = "gae"
OUTPUTS = [("advantages", "(B, T)"), ("returns", "(B, T)")]
BATCH_INDEPENDENT = True  # each row is its own rollout
GRADIENTS = False  # advantages and returns are targets, computed from detached values (CleanRL: torch.no_grad())

# Every dimension its own size, B != T, so a scan over the wrong axis cannot pass. The four settings of (γ, λ):
# PPO's usual (0.99, 0.95), a short horizon (0.9, 0.8) where a dropped λ or a dropped done moves advantages by
# tenths, Monte Carlo (1, 1), and TD(0) (0.97, 0). Every case has dones of its own: row 0 ends an episode in the
# middle, row 1 at the last step (which cuts the bootstrap), the last row never; the others at random.
# Rewards, values and the bootstrap are O(1) and independent, so no term can be dropped unseen.
CASES = [
    case(1, B=3, T=6, gamma=0.99, lam=0.95),
    case(2, B=4, T=9, gamma=0.9, lam=0.8),
    case(3, B=5, T=4, gamma=1.0, lam=1.0),
    case(4, B=2, T=7, gamma=0.97, lam=0.0),
]
TIMING = case(5, B=64, T=256, gamma=0.99, lam=0.95)


def _dones(c):
    """(B, T) 0/1: row 0 done in the middle, row 1 (if there are 3 rows or more) at the last step, the last row
    never, the other rows at random (about one step in four)."""
    d = (torch.rand(c.B, c.T, generator=c.generator(salt=4)) < 0.25).to(torch.float64)
    d[0] = 0.0
    d[0, c.T // 2 - 1] = 1.0
    if c.B >= 3:
        d[1, -1] = 1.0
    d[-1] = 0.0
    return d


def inputs(c, dtype):
    d = getattr(torch, dtype)
    rewards = torch.randn(c.B, c.T, generator=c.generator(salt=1), dtype=torch.float64)
    values = torch.randn(c.B, c.T, generator=c.generator(salt=2), dtype=torch.float64)
    last_value = torch.randn(c.B, generator=c.generator(salt=3), dtype=torch.float64)
    return rewards.to(d), values.to(d), _dones(c).to(d), last_value.to(d), c.gamma, c.lam


def _outputs(kit, c, args):
    got = kit.user(args, case=c)
    if not isinstance(got, (tuple, list)) or len(got) != 2 or not all(isinstance(g, torch.Tensor) for g in got) \
            or any(tuple(g.shape) != (c.B, c.T) for g in got):
        return None  # the shapes check reports it
    return tuple(got)


# ----------------------------------------------------------------------------- named mistakes
# Two the error model (checker/kit/errormodel.py) cannot express with one rewrite of the reference; every other slip
# (a done dropped from δ or from the recursion, its polarity, γ or λ dropped, V(s_t) for V(s_(t+1)), the returns) it
# names by itself.


def _no_bootstrap(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """TRL's loop kept as it is: nextvalues = 0.0 after the last step. No rule of the error model replaces a tensor
    argument (last_value) by zeros: its written-in values are scalars, which cannot stand where a (B,) tensor is
    unsqueezed and concatenated."""
    not_done = 1.0 - dones
    next_values = torch.cat([values[:, 1:], torch.zeros_like(last_value).unsqueeze(1)], dim=1)
    deltas = rewards + gamma * next_values * not_done - values
    advantages = _scan(deltas, gamma * lam * not_done)
    return advantages, advantages + values


def _dones_shifted(rewards, values, dones, last_value, gamma=0.99, lam=0.95):
    """CleanRL's loop on this contract's dones: nextnonterminal = 1 - dones[:, t + 1], and 1 - dones[:, -1] at the
    last step. The error model has no rewrite that shifts a tensor by one step along an axis and repeats its last
    column: that is two changes at once, an index moved and an edge case of its own."""
    shifted = torch.cat([dones[:, 1:], dones[:, -1:]], dim=1)
    not_done = 1.0 - shifted
    next_values = torch.cat([values[:, 1:], last_value.unsqueeze(1)], dim=1)
    deltas = rewards + gamma * next_values * not_done - values
    advantages = _scan(deltas, gamma * lam * not_done)
    return advantages, advantages + values


def _scan(deltas, discounts):
    out, running = torch.zeros_like(deltas), torch.zeros_like(deltas[:, 0])
    for t in reversed(range(deltas.shape[1])):
        running = deltas[:, t] + discounts[:, t] * running
        out[:, t] = running
    return out


MISTAKES = [
    Mistake("bootstrap value ignored", _no_bootstrap,
            "your advantages take V(s_T) = 0 after the last step (TRL's nextvalues = 0.0): a rollout is cut after T "
            "steps, often mid-episode, and the critic's last_value stands for the rewards that would have followed; "
            "use it as the next value of step T - 1, cut only where dones[:, -1] = 1"),
    Mistake("dones read one step late", _dones_shifted,
            "your code cuts at dones[:, t + 1] (CleanRL's and Stable-Baselines3's convention, where the flag stored "
            "with observation t says that observation STARTS a new episode): in this contract dones[:, t] = 1 means "
            "the episode ended AFTER step t, so step t's own flag cuts its next value and its recursion, "
            "1 - dones[:, t]"),
]


def _named(kit, c, args, got):
    """The named mistake or the error model's rewrite that gives the user's outputs on these inputs."""
    try:
        return kit.name_mistake(args, as_outputs(got, OUTPUTS), outputs=OUTPUTS, case=c, dtype="float64")
    except Fail:
        return None


# ----------------------------------------------------------------------------- checks


@check("structure", "gae(rewards, values, dones, last_value, gamma, lam) is a function")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["rewards", "values", "dones", "last_value", "gamma", "lam"])


@check("numerics", "the defaults are gamma=0.99 and lam=0.95")
def defaults(kit):
    c = CASES[1]
    args = kit.inputs(c)[:4]
    got, want = kit.user(args, case=c), kit.reference(args, case=c)
    try:
        compare(got[0] if isinstance(got, (tuple, list)) else got, want[0], "advantages", "(B, T)")
    except Fail as fail:
        if not matches(kit.user(args + (0.99, 0.95), case=c)[0], want[0]):
            raise Fail(t("{label}, called without gamma and lam: {fail}; with gamma=0.99 and lam=0.95 passed "
                         "explicitly it differs too, so the defaults are not the cause", label=c.label,
                         fail=fail)) from None
        raise Fail(t("{label}, called without gamma and lam: {fail}; the defaults are gamma=0.99 and lam=0.95 "
                     "(PPO's usual setting)", label=c.label, fail=fail)) from None


@check("masking", "a done at step t cuts the future: what comes after it changes no advantage up to t")
def done_cuts(kit):
    for c in (CASES[0], CASES[1]):
        args = kit.inputs(c)
        rewards, values, dones, last_value, gamma, lam = args
        outputs = _outputs(kit, c, args)
        if outputs is None:
            return
        before = outputs[0]
        end = c.T // 2 - 1  # row 0's episode ends after this step
        g = c.generator(salt=9)
        later = torch.zeros(c.B, c.T, dtype=torch.bool)
        later[0, end + 1:] = True
        r2 = torch.where(later, 5 * torch.randn(c.B, c.T, generator=g, dtype=rewards.dtype), rewards)
        v2 = torch.where(later, 5 * torch.randn(c.B, c.T, generator=g, dtype=values.dtype), values)
        lv2 = last_value.clone()
        lv2[0] = lv2[0] + 7.0
        after = _outputs(kit, c, (r2, v2, dones, lv2, gamma, lam))
        if after is None:
            return
        if not matches(after[0][0, :end + 1], before[0, :end + 1]):
            raise Fail(t("{label}: row 0's episode ends after step {end} (dones[0, {end}] = 1), yet changing the "
                         "rewards and values after it and the bootstrap value changed advantages[0, :{stop}]",
                         label=c.label, end=end, stop=end + 1),
                       _named(kit, c, args, outputs) or t("a done must cut both the next state's value in δ_t, γ·V(s_(t+1))·(1 - d_t), and the "
                         "recursion, γλ·(1 - d_t)·A_(t+1): the state after an episode's end belongs to another "
                         "episode. dones[:, t] = 1 means the episode ended AFTER step t: multiply by 1 - dones[:, t], "
                         "not by 1 - dones[:, t + 1]"))


@check("properties", "a reverse scan: A_t depends on steps t and later only (changing r_0 changes A_0 alone)")
def reverse_scan(kit):
    c = CASES[2]
    args = kit.inputs(c)
    rewards, values, dones, last_value, gamma, lam = args
    last = c.B - 1  # the row without a done
    outputs = _outputs(kit, c, args)
    if outputs is None:
        return
    r2 = rewards.clone()
    r2[last, 0] = r2[last, 0] + 1.0
    after = _outputs(kit, c, (r2, values, dones, last_value, gamma, lam))
    if after is None:
        return
    changed = (after[0][last] - outputs[0][last]).abs() > 1e-9
    if changed[1:].any() or not changed[0]:
        raise Fail(t("{label}, row {row} (no done): raising the first reward r_0 by 1 changed the advantages at "
                     "steps {steps}; only A_0 may change, since A_t sums the residuals of steps t, t + 1, ...",
                     label=c.label, row=last, steps=changed.nonzero().flatten().tolist()),
                   _named(kit, c, args, outputs) or t("the scan runs forwards: A_t = δ_t + γλ·A_(t+1) needs A_(t+1) first, so the loop goes from "
                     "t = T - 1 down to 0, for t in reversed(range(T))"))


@check("properties", "a rollout of one step (T = 1): only the bootstrap follows it")
def one_step(kit):
    c = case(6, B=3, T=1, gamma=0.9, lam=0.8)
    rewards, values, _, last_value, gamma, lam = inputs(c, "float64")
    dones = torch.tensor([[0.0], [1.0], [0.0]], dtype=torch.float64)
    args = (rewards, values, dones, last_value, gamma, lam)
    got, want = as_outputs(kit.user(args), OUTPUTS), kit.reference(args)
    for (name, legend), u, e in zip(OUTPUTS, got, want):
        try:
            compare(u, e, name, legend)
        except Fail as fail:
            raise Fail(t("{label}, rows 0 and 2 bootstrapped, row 1 done: {fail}", label=c.label, fail=fail.message),
                       fail.diagnosis or _named(kit, c, args, got)) from None


@check("properties", "the ends of [0, 1] are allowed: gamma=0 (the reward alone) and lam=1 give the reference's result")
def range_ends(kit):
    c = CASES[0]
    rewards, values, dones, last_value, _, _ = kit.inputs(c)
    args = (rewards, values, dones, last_value, 0.0, 1.0)
    got, want = as_outputs(kit.user(args), OUTPUTS), kit.reference(args)
    for (name, legend), u, e in zip(OUTPUTS, got, want):
        try:
            compare(u, e, name, legend)
        except Fail as fail:
            raise Fail(t("{label}, gamma=0, lam=1: {fail}", label=c.label, fail=fail.message),
                       fail.diagnosis or _named(kit, c, args, got)) from None


@check("properties", "gamma or lam outside [0, 1] raises ValueError")
def bad_settings(kit):
    rewards, values, dones, last_value, _, _ = kit.inputs(CASES[0])
    expect_raises([(f"gae(..., gamma={gamma}, lam={lam})",
                    lambda gamma=gamma, lam=lam: kit.user((rewards, values, dones, last_value, gamma, lam)))
                   for gamma, lam in ((1.5, 0.95), (-0.1, 0.95), (0.99, 1.5), (0.99, -0.1))],
                  t("a discount above 1 makes the advantages grow without bound along the rollout, a negative λ flips "
                    "the sign of every other term"))
