"""Hidden checks: beam search with a fixed-width beam, EOS retirement and length normalization.

The model handed to the user's code is checker.checks.torch_beam_search.driver.TableModel: a seeded table of
log-probabilities indexed by the last two tokens, so every case is deterministic and ties between
scores do not occur. Beam search returns a list of (ids, score), not tensors, so there are no
standard checks: the checks below compare hypotheses exactly (ids) and scores to 1e-9, against the
reference, against an exhaustive search, against greedy decoding, and against the model's own
log-probabilities; a driver records how the model was called (beam_search_calls, in the same module).
"""

import math

import torch

from checker.checks.torch_beam_search.driver import TableModel, beam_search_calls
from checker.kit import Fail, Mistake, UserError, case, check, expect_structure, raised
from checker.lang import said, t

TARGET = "beam_search"
_SCORE_RTOL, _SCORE_ATOL = 1e-9, 1e-12  # sums of at most a dozen float64 log-probabilities

# Every case its own sizes (V, beam_size, max_new); the seed fixes the table. eos_bias makes EOS likelier,
# so that hypotheses finish at different steps (case 6: every kept extension ends in EOS at step 4 of 8,
# so the search stops early).
CASES = [
    case(1, V=6, beam=3, max_new=5, bos=0, eos=1, lp=0.0, seed=11),
    case(2, V=7, beam=4, max_new=6, bos=5, eos=2, lp=1.0, seed=12, eos_bias=1.0),
    case(3, V=5, beam=2, max_new=7, bos=1, eos=4, lp=0.6, seed=13, eos_bias=0.5),
    case(4, V=8, beam=5, max_new=9, bos=3, eos=0, lp=2.0, seed=14, eos_bias=2.5),
    case(5, V=9, beam=6, max_new=4, bos=2, eos=7, lp=0.0, seed=15, eos_bias=1.5),
    case(6, V=10, beam=2, max_new=8, bos=6, eos=9, lp=0.5, seed=36, eos_bias=2.0),
    case(7, V=6, beam=3, max_new=1, bos=4, eos=5, lp=1.0, seed=37, eos_bias=0.5),  # the contract's least max_new_tokens
]
# beam >= V ** max_new: the beam never prunes, so beam search is exhaustive search.
_EXHAUSTIVE = [
    case(21, V=3, beam=30, max_new=3, bos=0, eos=2, lp=0.0, seed=21, eos_bias=0.3),
    case(22, V=4, beam=70, max_new=3, bos=1, eos=3, lp=1.0, seed=22, eos_bias=0.0),
]
TIMING = case(9, V=40, beam=8, max_new=16, bos=0, eos=1, lp=1.0, seed=9)


def make_model(c, beam_size=None) -> TableModel:
    model = TableModel(c.V, c.bos, c.seed, eos_id=c.eos, eos_bias=c.extra.get("eos_bias", 0.0))
    model.max_prefixes = beam_size  # the user's search may hand it at most beam_size prefixes at once
    return model


def inputs(c, dtype="float64"):
    return make_model(c, c.beam), c.bos, c.eos, c.beam, c.max_new, c.lp


# ----------------------------------------------------------------------------- an independent search with knobs


@torch.no_grad()
def search_with(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0, *, prune="sum",
                finish=True, count_eos=True, len_offset=0, eos_in_len=True, slots="shared", stop="no live",
                keep_live=True, score_out="normalized", cap=True, best_first=True,
                keep_bos=False, steps=0, accumulate=True, penalty="divide", parent_by="V"):
    """Beam search over Python lists; every knob at its default gives the contract's answer."""
    beam = [([bos_id], 0.0, 0.0)]  # (tokens with BOS, summed log-prob, last token's log-prob)
    finished = []

    def norm(ids, s):
        n = len(ids) - 1 + len_offset - (0 if eos_in_len or ids[-1] != eos_id else 1)
        return s / max(n, 1) ** length_penalty if penalty == "divide" else s * max(n, 1) ** length_penalty

    for _ in range(max_new_tokens + steps):
        logp = model(torch.tensor([ids for ids, _, _ in beam])).tolist()
        cands = [(ids + [tok], (s if accumulate else 0.0) + lp, lp) for (ids, s, _), row in zip(beam, logp) for tok, lp in enumerate(row)]
        key = {"sum": lambda h: h[1], "last": lambda h: h[2]}[prune]
        flat = {id(h): i for i, h in enumerate(cands)}  # index in the flattened (N * V,) candidates
        cands.sort(key=key, reverse=True)
        if slots == "shared":
            kept = cands[:beam_size]
            if parent_by == "beam":  # parent = flat // beam_size, token = flat % V: another prefix, or none
                V = len(logp[0])
                kept = [(beam[flat[id(h)] // beam_size][0] + [flat[id(h)] % V], h[1], h[2]) for h in kept]
            ended = [h for h in kept if finish and h[0][-1] == eos_id]
            beam = [h for h in kept if not (finish and h[0][-1] == eos_id)]
        else:  # Hugging Face style: EOS among the top beam_size retire, beam_size live ones carry on
            ended = [h for h in cands[:beam_size] if h[0][-1] == eos_id]
            beam = [h for h in cands if h[0][-1] != eos_id][:beam_size]
        for ids, s, lp in ended:
            finished.append((ids, s if count_eos else s - lp))
        if not beam or (stop == "first finished" and ended):
            break
    if keep_live:
        finished += [(ids, s) for ids, s, _ in beam]
    ranked = sorted(((ids, s, norm(ids, s)) for ids, s in finished), key=lambda h: h[2], reverse=best_first)
    ranked = ranked[:beam_size] if cap else ranked
    return [(ids if keep_bos else ids[1:], r if score_out == "normalized" else s) for ids, s, r in ranked]


def _variant(**knobs):
    return lambda model, bos, eos, beam, max_new, lp=0.0: search_with(model, bos, eos, beam, max_new, lp, **knobs)


MISTAKES = [
    Mistake("pruned by the last token", _variant(prune="last"),
            "your beam keeps the extensions with the best LAST-token log-probability: rank candidates by the "
            "summed log-probability of the whole hypothesis (score + log p(token))"),
    Mistake("finished hypotheses extended", _variant(finish=False),
            "your hypotheses go on after EOS: an extension that ends in eos_id is finished; move it out of the "
            "beam and never extend it"),
    Mistake("EOS log-probability not counted", _variant(count_eos=False),
            "the scores of your finished hypotheses leave out the log-probability of their EOS: EOS is a token "
            "the model chose; add its log-probability like any other"),
    Mistake("length counts BOS", _variant(len_offset=1),
            "your length normalization divides by (len + 1) ** length_penalty: len counts the generated tokens, "
            "EOS included, BOS not"),
    Mistake("length counts EOS out", _variant(eos_in_len=False),
            "your length normalization leaves EOS out of len: len counts every generated token, EOS included"),
    Mistake("finished hypotheses take no slot", _variant(slots="live"),
            "your beam refills to beam_size LIVE hypotheses after some finish (Hugging Face's rule); here a "
            "finished hypothesis keeps its slot: keep the beam_size best extensions, then retire those ending in "
            "EOS (the beam shrinks)"),
    Mistake("stops at the first finished hypothesis", _variant(stop="first finished"),
            "your search stops as soon as one hypothesis finishes: go on while any hypothesis is live "
            "(up to max_new_tokens steps)"),
    Mistake("unfinished hypotheses dropped", _variant(keep_live=False),
            "your result leaves out the hypotheses still live after max_new_tokens steps: they count as finished"),
    Mistake("one step long", _variant(steps=1),
            "your hypotheses grow one token past max_new_tokens: the loop runs max_new_tokens times, and the live "
            "hypotheses left then count as finished"),
    Mistake("scores not accumulated", _variant(accumulate=False),
            "your hypotheses are scored by their last token's log-probability alone: a hypothesis' score is the "
            "SUM of its log-probabilities, live_scores[:, None] + logp"),
    Mistake("length penalty multiplied", _variant(penalty="multiply"),
            "your ranking multiplies by len ** length_penalty: divide, score / len ** length_penalty (log-probabilities "
            "are negative, so dividing by a longer length raises a long hypothesis)"),
    Mistake("raw scores returned", _variant(score_out="raw"),
            "your scores are the summed log-probabilities: return the ranking score, sum / len ** length_penalty"),
    Mistake("more than beam_size returned", _variant(cap=False),
            "your result holds every finished hypothesis: return the beam_size best"),
    Mistake("worst first", _variant(best_first=False),
            "your result is ranked worst first: sort by score, highest first (reverse=True)"),
    Mistake("BOS in the ids", _variant(keep_bos=True),
            "your ids start with BOS: return the generated tokens only (ids[1:])"),
]
# Mistakes that raise on some cases, as the code they stand for does (an index past the live hypotheses):
# named on the cases where they run (_EXHAUSTIVE, where beam_size > N * V).
_RAISING = [
    Mistake("parent from beam_size", _variant(parent_by="beam"),
            "your extensions keep the right scores but grow the wrong prefixes: in the flattened (N * V,) candidates, "
            "index f extends hypothesis f // V with token f % V, V the vocabulary size (logp.size(-1)), not beam_size"),
]


# ----------------------------------------------------------------------------- reading the user's result


def hypotheses(value, where: str) -> list:
    """[(ids list[int], score float)] from what beam_search returned, or Fail saying what is wrong with it."""
    if not isinstance(value, (list, tuple)):
        raise Fail(t("{where}: beam_search should return a list of (ids, score) pairs, got {got}", where=where,
                     got=_kind(value)))
    out = []
    for i, item in enumerate(value):
        if not isinstance(item, (list, tuple)) or len(item) != 2:
            raise Fail(t("{where}: item {i} of the result should be a pair (ids, score), got {got}", where=where, i=i,
                         got=_kind(item)))
        ids, score = item
        tip = t(" (.tolist() turns a tensor into one)") if isinstance(ids, torch.Tensor) else ""
        if not isinstance(ids, list) or not all(isinstance(tok, int) and not isinstance(tok, bool) for tok in ids):
            raise Fail(t("{where}: the ids of item {i} should be a list of ints, got {got}{tip}", where=where, i=i,
                         got=_kind(ids), tip=tip))
        tip = t(" (.item() or .tolist() gives a Python float)") if isinstance(score, torch.Tensor) else ""
        if not isinstance(score, (float, int)) or isinstance(score, bool):
            raise Fail(t("{where}: the score of item {i} should be a Python float, got {got}{tip}", where=where, i=i,
                         got=_kind(score), tip=tip))
        out.append((list(ids), float(score)))
    return out


def _kind(x) -> str:
    if isinstance(x, torch.Tensor):
        return t("a tensor of shape {shape} ({dtype})", shape=tuple(x.shape), dtype=x.dtype)
    if isinstance(x, (list, tuple)):
        return t("a {type} of {n} items", type=type(x).__name__, n=len(x))
    return t("a {type}{value}", type=type(x).__name__, value=f" ({x!r})"[:80])


def same(got: list, want: list) -> bool:
    return len(got) == len(want) and all(
        g[0] == w[0] and math.isclose(g[1], w[1], rel_tol=_SCORE_RTOL, abs_tol=_SCORE_ATOL) for g, w in zip(got, want))


def _show(hyps: list, n: int = 3) -> str:
    shown = ", ".join(f"({ids}, {score:.4f})" for ids, score in hyps[:n])
    return t("[{shown}{more}] ({n} hypotheses)", shown=shown, more=', ...' if len(hyps) > n else '', n=len(hyps))


def _compare(kit, c, got, want, what="") -> None:
    if same(got, want):
        return
    if len(got) != len(want):
        diff = t("you return {got} hypotheses, expected {want}", got=len(got), want=len(want))
    else:
        i = next(i for i, (g, w) in enumerate(zip(got, want)) if not same([g], [w]))
        diff = t("hypothesis {i} is {ids} with score {score:.6g}, expected {want_ids} with {want_score:.6g}", i=i,
                 ids=got[i][0], score=got[i][1], want_ids=want[i][0], want_score=want[i][1])
    named = kit.name_mistake(inputs(c), got, MISTAKES + _RAISING, run=lambda m: m.impl(*inputs(c)), same=same)
    raise Fail(t("{label}{what}: {diff}; yours {yours}, expected {expected}", label=c.label, what=what, diff=diff,
                 yours=_show(got), expected=_show(want)), named)


# Errors whose cause is certain, whatever code raised them: the table model refuses more than beam_size
# prefixes, and torch.topk refuses a k larger than the axis it picks from.
_RAISED = (
    ("more than beam_size", "your beam grows past beam_size: keep only the beam_size best extensions of all N * V at "
                            "every step (one global topk)"),
    ("selected index k out of range", "torch.topk was asked for more entries than there are candidates: take "
                                      "k = min(beam_size, candidates.numel())"),
)


def _explained(err: UserError, label: str) -> Fail | UserError:
    """The Fail that names a raised error's cause when it is certain (_RAISED), else the error itself."""
    for needle, why in _RAISED:
        if needle in said(err.message, "en"):  # the model's own sentence, whatever the language spoken
            return raised(label, err, t(why))
    return err


def _run(kit, c, **changes):
    args = list(inputs(c))
    for i, name in enumerate(("model", "bos", "eos", "beam", "max_new", "lp")):
        if name in changes:
            args[i] = changes[name]
    args[0].max_prefixes = args[3]
    try:
        return hypotheses(kit.user(tuple(args)), c.label), args
    except UserError as err:
        raise _explained(err, c.label) from None


# ----------------------------------------------------------------------------- checks


@check("structure", "beam_search is a function taking (model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty)")
def structure(kit):
    expect_structure(kit, TARGET, module=False,
                     params=["model", "bos_id", "eos_id", "beam_size", "max_new_tokens", "length_penalty"])


@check("shapes", "the model receives (N, t) prefixes of live hypotheses only: never a finished one, 1 <= N <= beam_size")
def model_calls(kit):
    for c in CASES:
        try:
            reply = kit.drive(beam_search_calls, *inputs(c))
        except UserError as err:
            raise _explained(err, c.label) from None
        for n, length, after_eos in reply["calls"]:
            if n == 0:
                raise Fail(t("{label}: you called the model with no prefix at all (N = 0, t = {length}): when no "
                             "hypothesis is live the search is over; stop the loop there", label=c.label, length=length))
            if after_eos:
                raise Fail(t("{label}: at a step with prefixes of {length} tokens, {after_eos} of the {n} prefixes you "
                             "handed the model already hold EOS: a hypothesis ending in EOS is finished, out of the "
                             "beam and never extended; and each extension is a new list (ids + [token]): appending to "
                             "a list two hypotheses share writes one's token into the other",
                             label=c.label, length=length, after_eos=after_eos, n=n))
        steps = max((length for _, length, _ in reply["calls"]), default=0)
        if steps > c.max_new:
            raise Fail(t("{label}: you called the model on prefixes of {steps} tokens: with max_new_tokens = {max_new} "
                         "the longest prefix it sees is BOS + {most} tokens", label=c.label, steps=steps,
                         max_new=c.max_new, most=c.max_new - 1))


@check("shapes", "returns a list of at most beam_size (ids, score) pairs; ids exclude BOS, EOS only last")
def result_form(kit):
    for c in CASES:
        got, _ = _run(kit, c)
        if not got or len(got) > c.beam:
            raise Fail(t("{label}: beam_search returned {n} hypotheses; it returns between 1 and beam_size = {beam} "
                         "(the best finished ones)", label=c.label, n=len(got), beam=c.beam))
        for ids, _ in got:
            if not 1 <= len(ids) <= c.max_new:
                raise Fail(t("{label}: hypothesis {ids} has {n} tokens; a hypothesis holds 1 to max_new_tokens = "
                             "{max_new} generated tokens (BOS excluded)", label=c.label, ids=ids, n=len(ids),
                             max_new=c.max_new))
            if c.eos in ids[:-1]:
                raise Fail(t("{label}: hypothesis {ids} goes on after EOS ({eos}): an extension ending in EOS is "
                             "finished and never extended", label=c.label, ids=ids, eos=c.eos))
            if any(not 0 <= tok < c.V for tok in ids):
                raise Fail(t("{label}: hypothesis {ids} holds ids outside the vocabulary [0, {V})", label=c.label,
                             ids=ids, V=c.V))


@check("numerics", "every score is the hypothesis' summed log-probability / len ** length_penalty")
def scores_are_log_probabilities(kit):
    for c in CASES:
        got, _ = _run(kit, c)
        model = make_model(c)
        for ids, score in got:
            if c.eos in ids[:-1] or any(not 0 <= t < c.V for t in ids) or not ids:
                continue  # the shapes check names this
            total = sum(model.log_prob(ids))
            want = total / len(ids) ** c.lp
            if not math.isclose(score, want, rel_tol=_SCORE_RTOL, abs_tol=_SCORE_ATOL):
                hint = ""
                if math.isclose(score, total, rel_tol=_SCORE_RTOL) and c.lp:
                    hint = t(": that is the raw sum; divide by len ** length_penalty")
                elif ids[-1] == c.eos and math.isclose(score * len(ids) ** c.lp, total - model.log_prob(ids)[-1],
                                                       rel_tol=_SCORE_RTOL):
                    hint = t(": EOS's log-probability is missing from it")
                elif c.lp and math.isclose(score, total / (len(ids) + 1) ** c.lp, rel_tol=_SCORE_RTOL):
                    hint = t(": you divide by (len + 1) ** length_penalty; len counts EOS but not BOS")
                raise Fail(t("{label}: hypothesis {ids} has score {score:.6g}, but its log-probabilities sum to "
                             "{total:.6g} over len = {n} tokens, so its score is {want:.6g} (length_penalty = {lp}){hint}",
                             label=c.label, ids=ids, score=score, total=total, n=len(ids), want=want, lp=c.lp,
                             hint=hint))


@check("numerics", "the same hypotheses, in the same order, with the same scores as the reference")
def matches_reference(kit):
    for c in CASES:
        got, args = _run(kit, c)
        _compare(kit, c, got, kit.reference(tuple(args)))


@check("properties", "with beam_size >= V ** max_new_tokens beam search is exhaustive search")
def exhaustive(kit):
    for c in _EXHAUSTIVE:
        got, _ = _run(kit, c)
        _compare(kit, c, got, exhaustive_search(*inputs(c)), t(", compared with an exhaustive search"))


def exhaustive_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty=0.0):
    """Every sequence (stopped at EOS or at max_new_tokens tokens), ranked by sum / len ** length_penalty."""
    done, stack = [], [[]]
    while stack:
        ids = stack.pop()
        logp = model(torch.tensor([[bos_id] + ids]))[0].tolist()
        for token, _ in enumerate(logp):
            seq = ids + [token]
            if token == eos_id or len(seq) == max_new_tokens:
                done.append(seq)
            else:
                stack.append(seq)
    ranked = sorted(((ids, sum(model.log_prob(ids)) / len(ids) ** length_penalty) for ids in done),
                    key=lambda h: h[1], reverse=True)
    return ranked[:beam_size]


@check("properties", "beam_size = 1 is greedy decoding")
def greedy(kit):
    for c in CASES[:3]:
        got, _ = _run(kit, c, beam=1)
        _compare(kit, c, got, greedy_search(*inputs(c)[:3], c.max_new, c.lp), t(", beam_size=1 (greedy decoding)"))


def greedy_search(model, bos_id, eos_id, max_new_tokens, length_penalty=0.0):
    ids, total = [], 0.0
    while len(ids) < max_new_tokens and (not ids or ids[-1] != eos_id):
        logp = model(torch.tensor([[bos_id] + ids]))[0]
        ids.append(int(logp.argmax()))
        total += float(logp.max())
    return [(ids, total / len(ids) ** length_penalty)]


@check("properties", "the best hypothesis never scores below greedy decoding (length_penalty = 0, these models)")
def not_below_greedy(kit):
    for c in CASES:
        got, _ = _run(kit, c, lp=0.0)
        if not got:
            continue
        (ids, score), = greedy_search(*inputs(c)[:3], c.max_new)
        if got[0][1] < score - 1e-9:
            raise Fail(t("{label}, length_penalty=0: your best hypothesis {best} scores {best_score:.6g}, below greedy "
                         "decoding's {ids} ({score:.6g}); on these models a beam of {beam} finds better", label=c.label,
                         best=got[0][0], best_score=got[0][1], ids=ids, score=score, beam=c.beam))


@check("properties", "length_penalty ranks the finished hypotheses by sum / len ** length_penalty, not the search")
def length_penalty_ranks(kit):
    c = CASES[1]
    for lp in (0.0, 1.0, 3.0):
        got, args = _run(kit, c, lp=lp)
        _compare(kit, c, got, kit.reference(tuple(args)), t(", length_penalty={lp}", lp=lp))
