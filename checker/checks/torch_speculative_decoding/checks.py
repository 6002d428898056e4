"""Hidden checks: speculative decoding with greedy acceptance (draft proposes k, target verifies in one call).

The models handed to the user's code are checker.checks.torch_speculative_decoding.driver.TableLM: seeded tables of
logits indexed by the last two tokens, so every case is deterministic and argmax never ties. The draft is
the target's table plus noise (it agrees with the target most of the time, so rounds end in every way:
a mismatch at the first draft, in the middle, or all accepted with a bonus token), the target itself, or
the target negated (never right). A driver (speculative_run) counts the calls each model receives.

The result is a list of ids, not tensors, so there are no standard checks: the output is compared with
the target's greedy decode, and the number of target calls with the count of the contract's algorithm
(one per round). A wrong output or count is named by the knobbed algorithm below.
"""

import math

import torch

from checker.checks.torch_speculative_decoding.driver import TableLM, speculative_run
from checker.kit import Fail, Mistake, UserError, case, check, describe, expect_structure
from checker.lang import said, t

TARGET = "speculative_decode"

# Every case its own sizes: V, k, max_new, the prompt's length; noise sets how often the draft agrees.
# Cases 3 and 5 have an EOS that the greedy decode reaches mid-way (at its 7th and 13th token;
# eos_bias can make it likelier). Case 4 has k = 1; case 6 asks for fewer tokens than k.
CASES = [
    case(1, V=7, k=3, max_new=14, prompt_len=2, seed=31, noise=0.9, eos=None),
    case(2, V=9, k=4, max_new=17, prompt_len=3, seed=32, noise=1.4, eos=None),
    case(3, V=6, k=2, max_new=12, prompt_len=1, seed=35, noise=0.5, eos=4, eos_bias=0.3),
    case(4, V=8, k=1, max_new=9, prompt_len=4, seed=34, noise=1.0, eos=None),
    case(5, V=10, k=5, max_new=16, prompt_len=2, seed=49, noise=0.5, eos=7, eos_bias=0.0),
    case(6, V=5, k=6, max_new=4, prompt_len=3, seed=36, noise=0.7, eos=None),
    # the contract's own edges: one token to generate, and an EOS whose id is 0 (`if eos_id and ...` skips it)
    case(7, V=6, k=3, max_new=1, prompt_len=2, seed=37, noise=0.8, eos=None),
    case(8, V=7, k=3, max_new=12, prompt_len=2, seed=38, noise=0.6, eos=0, eos_bias=0.3),
]
TIMING = case(9, V=50, k=4, max_new=64, prompt_len=8, seed=39, noise=1.0, eos=None)


def make_models(c, draft="noisy"):
    """(target, draft): draft "noisy" (target + noise), "same" (the target's table) or "wrong" (negated)."""
    eos = dict(eos_id=c.eos, eos_bias=c.extra.get("eos_bias", 0.0))
    target = TableLM(c.V, c.seed, **eos, name="target")
    knobs = {"noisy": dict(noise=c.noise, noise_seed=c.seed + 100), "same": {}, "wrong": dict(sign=-1.0)}[draft]
    return target, TableLM(c.V, c.seed, **eos, **knobs, name="draft")


def make_prompt(c):
    g = c.generator(salt=3)
    return torch.randint(0, c.V, (c.prompt_len,), generator=g).tolist()


def inputs(c, dtype="float64"):
    target, draft = make_models(c)
    return target, draft, make_prompt(c), c.max_new, c.k, c.eos


def _limit(c):
    return 2 * c.max_new + 2  # a correct loop makes at most max_new target calls; twice that means it stalls


# ----------------------------------------------------------------------------- references with knobs


@torch.no_grad()
def greedy(target, prompt, max_new_tokens, eos_id):
    seq, out = list(prompt), []
    while len(out) < max_new_tokens:
        token = int(target(torch.tensor([seq]))[0, -1].argmax())
        out.append(token)
        seq.append(token)
        if token == eos_id:
            break
    return out


@torch.no_grad()
def speculate(target, draft, prompt, max_new, k, eos, *, mismatch="correct", bonus=True, shift=0, per_token=False,
              feed_draft=True, stop_eos=True, keep_eos=True, truncate=True, with_prompt=False, budget=True,
              correction_call=False, verifier="target", stale=False, max_rounds=200):
    """The contract's algorithm; every knob at its default gives the reference. Returns (tokens, target calls)."""
    target.calls.clear()
    seq, out = list(prompt), []
    for _ in range(max_rounds):
        if len(out) >= max_new:
            break
        g = min(k, max_new - len(out)) if budget else k
        drafts = []
        for _ in range(g):
            ctx = seq + drafts if feed_draft else seq
            drafts.append(int(draft(torch.tensor([ctx]))[0, -1].argmax()))
        if per_token:
            choices = [int(target(torch.tensor([seq + drafts[:j]]))[0, -1].argmax()) for j in range(g + 1)]
            n = 0
            while n < g and drafts[n] == choices[n]:
                n += 1
            del target.calls[len(target.calls) - (g - n):]  # a per-token verifier stops at the first mismatch
        else:
            logits = (target if verifier == "target" else draft)(torch.tensor([seq + drafts]))[0]
            start = (len(prompt) if stale else len(seq)) - 1 + shift  # stale: the bug that keeps the prompt's length
            choices = logits[start:start + g + 1].argmax(-1).tolist()
            choices += [None] * (g + 1 - len(choices))
            n = 0
            while n < g and drafts[n] == choices[n]:
                n += 1
        if correction_call and n < g:
            target(torch.tensor([seq + drafts[:n]]))  # the bug: a second call for the token the first one gave
        if n == g and not bonus:
            new = drafts[: g - 1] + [choices[g - 1]] if g else []  # the off-by-one: n = g - 1 when all match
        elif n < g and mismatch == "draft":
            new = drafts[: n + 1]
        else:
            new = drafts[:n] + [choices[n]]
        if None in new:
            raise ValueError("shifted past the logits")
        if stop_eos and eos in new:
            out += new[: new.index(eos) + keep_eos]  # keep_eos=False: the bug that stops before eos_id
            break
        out += new
        seq += new
    else:
        raise RuntimeError("no progress")
    out = out[:max_new] if truncate else out
    return (list(prompt) + out if with_prompt else out), len(target.calls)


def _variant(**knobs):
    return lambda *args: speculate(*args, **knobs)


_FEED = ("your draft proposes every token from the same prefix (so it repeats one token): each proposal must extend "
         "seq + the drafts before it, d_j = argmax(draft(seq + d_1..d_{j-1})[0, -1]); the output is right, but fewer "
         "drafts are accepted and the target is called more often")
_NOT_CUT = ("your output holds more than max_new_tokens tokens: a fully accepted last round adds g + 1 tokens, one "
            "more than were left; cut the result at max_new_tokens")
MISTAKES = [
    Mistake("draft token kept on mismatch", _variant(mismatch="draft"),
            "your output keeps the DRAFT's token where the draft and the target disagree: at the first mismatch the "
            "draft's token is rejected and the target's own choice (its argmax at that position) takes its place, "
            "so the output is exactly the target's greedy decode"),
    Mistake("bonus token missing", _variant(bonus=False),
            "your rounds that accept every draft add only g tokens: the target's verification call also gives its "
            "choice after the last draft, a bonus token, so a fully accepted round adds g + 1 (an off-by-one in the "
            "accepted length: with n = i from `for i in range(g)`, n stops at g - 1 when all match). The output is "
            "right, but it costs extra target calls"),
    Mistake("logits one position late", _variant(shift=1),
            "your verification reads the target's logits one position late: logits[0, i] scores the token AFTER "
            "position i, so draft d_1 (at position len(seq)) is checked against logits[0, len(seq) - 1], the last "
            "position of the prefix: choices = logits[0, len(seq) - 1:].argmax(-1)"),
    Mistake("a target call per draft token", _variant(per_token=True),
            "your verification calls the target once per draft token: the whole point of speculative decoding is "
            "ONE target call on seq + all g drafts, whose logits at the last g + 1 positions check every draft at "
            "once"),
    Mistake("draft not fed its own proposals", _variant(feed_draft=False), _FEED),
    Mistake("EOS ignored", _variant(stop_eos=False),
            "your output goes on after eos_id: cut the new tokens right after the first eos_id and stop"),
    Mistake("EOS not returned", _variant(keep_eos=False),
            "your output stops before eos_id instead of right after it: eos_id is the last token of the result "
            "(greedy decoding appends it, then stops)"),
    Mistake("not cut at max_new_tokens", _variant(truncate=False), _NOT_CUT),
    Mistake("k drafts and no cut", _variant(truncate=False, budget=False), _NOT_CUT),
    Mistake("a second target call for the correction", _variant(correction_call=True),
            "your round calls the target a second time for the correction token: the verification call's logits "
            "already hold it, p_{n+1} = argmax logits[0, len(seq) - 1 + n]; one target call per round"),
    Mistake("prefix length of the first round", _variant(stale=True),
            "your verification reads the logits at len(prompt) - 1 + j in every round: the drafts follow seq = "
            "prompt + the tokens generated so far, so read logits[0, len(seq) - 1 + j] with this round's len(seq)"),
    Mistake("verified by the draft", _variant(verifier="draft"),
            "your verification runs the DRAFT model on seq + the drafts: the target must be the one that checks "
            "them, in one call per round, or the output is the draft's and not the target's"),
    Mistake("prompt in the output", _variant(with_prompt=True),
            "your output starts with the prompt: return the generated tokens only"),
]


# ----------------------------------------------------------------------------- reading the user's result


def _tokens(value, where):
    if isinstance(value, dict) and "tensor" in value:
        raise Fail(t("{where}: speculative_decode should return a Python list of ints, got a tensor: .tolist() turns "
                     "it into one", where=where))
    if not isinstance(value, list) or not all(isinstance(x, int) and not isinstance(x, bool) for x in value):
        raise Fail(t("{where}: speculative_decode should return a Python list of ints, got {got}", where=where,
                     got=describe(value)))
    return value


def _run(kit, c, draft="noisy"):
    target, drafter = make_models(c, draft)
    try:
        reply = kit.drive(speculative_run, target, drafter, make_prompt(c), c.max_new, c.k, c.eos, _limit(c))
    except UserError as err:
        if "must add at least one token" in said(err.message, "en"):  # the model's own sentence (checker.errors.Said)
            raise Fail(t("{label}: {message}. Your loop stalls: after the accepted drafts, append the target's own "
                         "token (the correction of the first wrong draft, or the bonus token); without it a round "
                         "whose first draft is wrong adds nothing, and the next round proposes the same draft again",
                         label=c.label, message=err.message),
                       t("your rounds never append the target's correction token: append d_1..d_n and then p_{n+1}, "
                         "the target's choice where the first draft failed")) from None
        raise
    return _tokens(reply["result"], c.label), reply


def _expected(c, draft="noisy"):
    target, drafter = make_models(c, draft)
    return speculate(target, drafter, make_prompt(c), c.max_new, c.k, c.eos)


def _name(kit, c, got, draft="noisy"):
    def run(m, case=c):
        target, drafter = make_models(case, draft)
        return m.impl(target, drafter, make_prompt(case), case.max_new, case.k, case.eos)

    users: dict = {}

    def user(case):  # the user's (tokens, target calls) on another case, once
        if case.id not in users:
            try:
                tokens, reply = _run(kit, case, draft)
                users[case.id] = (tuple(tokens), len(reply["target_calls"]))
            except (Fail, UserError):
                users[case.id] = None
        return users[case.id]

    def everywhere(m):  # the right tokens and a count of calls fit several mistakes on one case: so on every case
        # where the user's result is not the reference's, the mistake's must be the user's (kit._reproduces' rule)
        for other in CASES:
            if other is c:
                continue
            want, calls = _expected(other, draft)
            if user(other) == (tuple(want), calls):
                continue
            tokens, count = run(m, other)
            if user(other) != (tuple(tokens), count):
                return False
        return True

    return kit.name_mistake((), got, run=run, same=lambda u, w: tuple(u) == tuple(w), confirm=everywhere)


# ----------------------------------------------------------------------------- checks


@check("structure", "speculative_decode is a function taking (target, draft, prompt, max_new_tokens, k, eos_id)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["target", "draft", "prompt", "max_new_tokens", "k", "eos_id"])


@check("shapes", "the models receive (1, t) int64 ids; the result is a list of at most max_new_tokens new ids")
def result_form(kit):
    for c in CASES:
        got, reply = _run(kit, c)
        if len(got) > c.max_new:
            raise Fail(t("{label}: {n} tokens returned, more than max_new_tokens = {max_new}", label=c.label,
                         n=len(got), max_new=c.max_new), _name(kit, c, (got, len(reply["target_calls"]))))
        if any(not 0 <= tok < c.V for tok in got):
            raise Fail(t("{label}: the result {got} holds ids outside the vocabulary [0, {V})", label=c.label, got=got,
                         V=c.V))


@check("numerics", "the output equals the target's greedy decode on every case (EOS, k = 1, max_new_tokens < k)")
def equals_greedy(kit):
    for c in CASES:
        got, reply = _run(kit, c)
        target, _ = make_models(c)
        want = greedy(target, make_prompt(c), c.max_new, c.eos)
        if got != want:
            i = next((i for i, (a, b) in enumerate(zip(got, want)) if a != b), min(len(got), len(want)))
            raise Fail(t("{label}: your tokens {got} differ from the target's greedy decode {want} (first at position "
                         "{i})", label=c.label, got=got, want=want, i=i),
                       _name(kit, c, (got, len(reply["target_calls"]))))


@check("properties", "one target call per round: exactly the contract's count of target calls on every case")
def target_calls(kit):
    for c in CASES:
        got, reply = _run(kit, c)
        want, calls = _expected(c)
        used = len(reply["target_calls"])
        if used != calls:
            found = _name(kit, c, (got, used))
            raise Fail(t("{label}: the target was called {used} times; the contract's algorithm calls it {calls} times "
                         "(one verification per round, {k} drafts each) for these {n} tokens", label=c.label, used=used,
                         calls=calls, k=c.k, n=len(want)), found)


@check("properties", "the target as its own draft: every proposal accepted, ceil(max_new_tokens / (k + 1)) target calls")
def perfect_draft(kit):
    for c in (CASES[0], CASES[1], CASES[3]):
        got, reply = _run(kit, c, draft="same")
        used, want = len(reply["target_calls"]), math.ceil(c.max_new / (c.k + 1))
        if used != want:
            found = _name(kit, c, (got, used), draft="same")
            raise Fail(t("{label}, draft = the target: the target was called {used} times for {max_new} tokens; when "
                         "every draft is accepted each round adds k + 1 = {k1} tokens (the k drafts and the target's "
                         "bonus token): ceil({max_new} / {k1}) = {want} calls", label=c.label, used=used,
                         max_new=c.max_new, k1=c.k + 1, want=want), found)


@check("properties", "a draft that is always wrong: one token per target call, and still the target's greedy output")
def hopeless_draft(kit):
    for c in (CASES[0], CASES[4]):
        got, reply = _run(kit, c, draft="wrong")
        target, _ = make_models(c)
        want = greedy(target, make_prompt(c), c.max_new, c.eos)
        used = len(reply["target_calls"])
        if got != want or used != len(want):
            found = _name(kit, c, (got, used), draft="wrong")
            raise Fail(t("{label}, a draft whose every proposal is rejected: your tokens {got} with {used} target calls; "
                         "expected the greedy {want} with {calls} calls, one per token (each round keeps only the "
                         "target's correction)", label=c.label, got=got, used=used, want=want, calls=len(want)), found)


def _rounds(reply) -> list:
    """[(lengths of the draft's inputs, length of the target's input)] round by round, from the models' log."""
    rounds, current = [], []
    for name, length in reply["log"]:
        if name == "draft":
            current.append(length)
        else:
            rounds.append((current, length))
            current = []
    return rounds


@check("properties", "each draft proposal is made on the prefix plus the drafts before it")
def draft_calls(kit):
    for c in CASES:
        _, reply = _run(kit, c)
        for i, (drafts, _) in enumerate(_rounds(reply)):
            if drafts and drafts != list(range(drafts[0], drafts[0] + len(drafts))):
                raise Fail(t("{label}: in round {i} the draft received inputs of {lengths} tokens: the j-th proposal "
                             "is made on the prefix plus the j - 1 drafts before it, so the lengths grow by one",
                             label=c.label, i=i + 1, lengths=drafts), t(_FEED))


# Drafting k tokens when fewer are left gives the right output with the right target calls; the draft
# calls beyond the budget are wasted work, which an interviewer asks about rather than fails.
@check("properties", "the draft proposes min(k, tokens left) tokens per round at most", followup=True)
def draft_budget(kit):
    for c in CASES:
        _, reply = _run(kit, c)
        for i, (drafts, verified) in enumerate(_rounds(reply)):
            left = c.max_new - (verified - len(drafts) - c.prompt_len)  # tokens still to generate at this round
            if len(drafts) > min(c.k, left):
                raise Fail(t("{label}: round {i} called the draft {n} times before verifying, with {left} tokens left "
                             "to generate: it proposes g = min(k, tokens left) = {g} tokens, one call each (a draft "
                             "beyond the budget can never be used)", label=c.label, i=i + 1, n=len(drafts), left=left,
                             g=min(c.k, left)))


@check("hygiene", "leaves the caller's prompt list unchanged")
def prompt_unchanged(kit):
    c = CASES[0]
    _, reply = _run(kit, c)
    if reply["prompt_after"] != make_prompt(c):
        raise Fail(t("{label}: the prompt list was {before} and is {after} after your call", label=c.label,
                     before=make_prompt(c), after=reply["prompt_after"]),
                   t("your code appends to the caller's list: copy it (seq = list(prompt)) before appending tokens"))
