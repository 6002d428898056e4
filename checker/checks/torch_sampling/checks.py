"""Hidden checks: temperature, top-k and top-p (nucleus) filtering, and sampling the next token.

TARGET (filter_logits) goes through the standard checks (exact values: eligible tokens hold
logits / temperature, the others -inf). sample_next_token is checked below, in the child, on
N = 20000 draws per row: no removed token is ever drawn, the frequencies pass a chi-square test
against the reference distribution, the same generator seed gives the same draws, temperature 0
is the argmax.

The chi-square threshold: each test fails a correct sampler with probability ALPHA = 1e-7 (the
statistic's upper tail, computed exactly with the regularized gamma function), and the checks run
at most 10 such tests, so a correct sampler fails with probability < 1e-6. Every generator is
seeded, so a given implementation always gets the same verdict.
"""

import torch

from checker.kit import Accepted, Convention, expect_raises, Fail, Mistake, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "filter_logits"
OUTPUTS = [("filtered logits", "(..., V)")]
BATCH_INDEPENDENT = True
GRADIENTS = False  # sampling is inference: nothing is trained through the filter
DEVICE = True  # the -inf fill or a mask made inside must follow the logits' device

# Every dimension its own size; each case exercises one part of the contract:
# 1 top-k alone, 2 top-p alone, 3 top-k then top-p (the nucleus of what top-k left differs from the
# nucleus of the full distribution), 4 both switched off (0 and 1.0), 5 top_k >= V keeps all,
# 6 logits (B, T, V) for every position: the vocabulary is the last axis, not axis 1.
CASES = [
    case(1, B=3, V=11, temperature=0.7, top_k=5, top_p=None),
    case(2, B=4, V=13, temperature=1.3, top_k=None, top_p=0.8),
    case(3, B=2, V=17, temperature=1.6, top_k=6, top_p=0.7),
    case(4, B=5, V=7, temperature=1.0, top_k=0, top_p=1.0),
    case(5, B=6, V=9, temperature=2.0, top_k=12, top_p=0.6),
    case(6, B=2, T=3, V=8, temperature=0.8, top_k=5, top_p=0.7),
]
# A cut within MARGIN of top_p could fall either way with another (correct) rounding order: the
# logits are redrawn (deterministically) until every cumulative sum stays MARGIN away from top_p.
_MARGIN = 1e-3


def _logits(c, dtype="float64", salt=0):
    for attempt in range(100):
        shape = (c.B, c.T, c.V) if "T" in c.dims else (c.B, c.V)
        x = torch.randn(shape, generator=c.generator(salt + attempt), dtype=torch.float64) * 2.0
        if _clear_of_boundaries(x, c.temperature, c.top_k, c.top_p):
            return x.to(getattr(torch, dtype))
    raise AssertionError(f"{c.label}: no logits clear of the top-p boundary")


def _clear_of_boundaries(x, temperature, top_k, top_p):
    if top_p is None or top_p >= 1.0:
        return True
    scores = _filter(x, temperature, top_k, None)
    probs = scores.sort(dim=-1, descending=True).values.softmax(-1)
    before = probs.cumsum(-1) - probs
    return bool(((before - top_p).abs() > _MARGIN).all())


def inputs(c, dtype):
    return _logits(c, dtype), c.temperature, c.top_k, c.top_p


# ----------------------------------------------------------------------------- named mistakes


def _filter(logits, temperature=1.0, top_k=None, top_p=None, *, temp="divide", k_shift=0, nucleus_of="top-k",
            cut="before", unsorted=False, fill=float("-inf"), probs=False, one_is_off=True,
            axis=-1):
    """filter_logits with knobs; every knob at its default gives the right answer."""
    t = {"divide": temperature, "multiply": 1 / temperature, "ignore": 1.0, "after": 1.0}[temp]
    scores = logits / t
    keep = torch.ones_like(scores, dtype=torch.bool)
    if top_k and top_k + k_shift < scores.size(-1):
        kth = scores.topk(top_k + k_shift, dim=-1).values[..., -1:]
        keep &= scores >= kth
    if top_p is not None and (top_p < 1.0 or not one_is_off):
        pool = scores.masked_fill(~keep, float("-inf")) if nucleus_of == "top-k" else scores
        sorted_scores, order = pool.sort(dim=-1, descending=True)
        p = sorted_scores.softmax(axis)
        cum = p.cumsum(-1)
        drop = {"before": cum - p >= top_p, "crossing": cum > top_p}[cut]
        if cut == "crossing":
            drop[..., 0] = False  # HF's min_tokens_to_keep: the most probable token always stays
        keep &= drop.logical_not() if unsorted else drop.scatter(-1, order, drop).logical_not()
    if temp == "after":
        scores = scores / temperature
    out = scores.masked_fill(~keep, torch.finfo(scores.dtype).min if fill == "finfo" else fill)
    return out.softmax(-1) if probs else out


def _variant(**knobs):
    return lambda logits, temperature=1.0, top_k=None, top_p=None: _filter(logits, temperature, top_k, top_p, **knobs)


MISTAKES = [
    Mistake("top-p drops the crossing token", _variant(cut="crossing"),
            "your nucleus stops BEFORE the token that crosses top_p (you keep tokens with cumsum <= top_p): keep "
            "the smallest set whose total reaches top_p, i.e. drop a token only when the tokens more probable "
            "than it already sum to >= top_p (cumsum - probs >= top_p)"),
    Mistake("top-p on the pre-top-k distribution", _variant(nucleus_of="all"),
            "your nucleus is computed on the full distribution, before top-k: apply top-p to what top-k left "
            "(set the top-k losers to -inf first, then softmax and cumsum), as Hugging Face's warpers do"),
    Mistake("top-p before temperature", _variant(temp="after"),
            "your nucleus is computed on softmax(logits), before the temperature: divide by the temperature "
            "FIRST, then top-k, then top-p on the tempered distribution"),
    Mistake("top-k keeps k+1", _variant(k_shift=1),
            "your top-k keeps k + 1 tokens: the threshold is topk(logits, k).values[..., -1:], the k-th "
            "largest (index k - 1, not k)"),
    Mistake("0 instead of -inf", _variant(fill=0.0),
            "your removed tokens hold 0 (a mask multiplied in?): a logit of 0 is not 'never'; set them to -inf "
            "with masked_fill(remove, float('-inf'))"),
    Mistake("probabilities returned", _variant(probs=True),
            "your output equals softmax of the filtered logits: return the filtered LOGITS (the sampler takes "
            "the softmax)"),
]


# A large negative fill instead of -inf gives the removed tokens probability exactly 0 after softmax
# (exp underflows), so sampling is the same: the NumPy tutorial's -1e9 habit and torch.finfo(dtype).min (Hugging
# Face's attention masks) pass as accepted variants, named in the report (kata check --strict fails them).
_FILL_WHY = ("softmax gives them probability exactly 0 (the exp underflows), so the draws are the same. This kata's "
             "reference fills with float('-inf'), which stays 'never' whatever is added to the logits later (a "
             "repetition penalty, a bias) and says what it means")
CONVENTIONS = (
    Convention("-1e9 for removed tokens", impl=_variant(fill=-1e9),
               explain=f"your removed tokens hold -1e9 (the NumPy tutorial's habit) instead of -inf: {_FILL_WHY}"),
    Convention("finfo.min for removed tokens", impl=_variant(fill="finfo"),
               explain=f"your removed tokens hold torch.finfo(dtype).min instead of -inf: {_FILL_WHY}"),
)
# A logit below this is a removed token written as a large negative number (-1e9, finfo.min): the
# eligible ones are logits / temperature, never near it.
_REMOVED_BELOW = -1e8


def _kept(x: torch.Tensor) -> torch.Tensor:
    return torch.isfinite(x) & (x > _REMOVED_BELOW)


# ----------------------------------------------------------------------------- filter_logits checks


@check("structure", "filter_logits and sample_next_token are functions with the documented arguments")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["logits", "temperature", "top_k", "top_p"])
    expect_structure(kit, "sample_next_token", module=False,
                     params=["logits", "temperature", "top_k", "top_p", "generator"])


@check("masking", "exactly the eligible tokens stay finite: top-k, then top-p on what top-k left")
def eligible_set(kit):
    for c in CASES:
        args = inputs(c, "float64")
        got = kit.user(args)
        want = kit.reference(args)
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return  # the shapes check says what is wrong
        mine, theirs = _kept(got).reshape(-1, c.V), _kept(want).reshape(-1, c.V)
        if not torch.equal(mine, theirs):
            b = int((mine != theirs).any(-1).nonzero()[0])  # a row of the logits flattened to (-1, V)
            keep = lambda m: m[b].nonzero().flatten().tolist()  # noqa: E731
            found = kit.diagnose(c, "float64", (got,))
            values = dict(label=c.label, b=b, mine=keep(mine), theirs=keep(theirs))
            if found:
                raise Fail(t("{label}, row {b}: you keep tokens {mine}, expected {theirs}", **values), found)
            raise Fail(t("{label}, row {b}: you keep tokens {mine}, expected {theirs}: temperature first, then top-k "
                         "(ties at the k-th value kept), then the nucleus of what top-k left", **values), found)


@check("properties", "top-p keeps at least the most probable token, even for a tiny top_p")
def tiny_top_p(kit):
    c = CASES[1]
    logits = _logits(c)
    got = kit.user((logits, 1.0, None, 1e-6))
    compare(got, kit.reference((logits, 1.0, None, 1e-6)), t("{label}, top_p=1e-6: filtered logits", label=c.label),
            "(B, V)")


@check("properties", "top_p=1.0 and top_k=0 switch filtering off, even for a token of vanishing probability")
def off_means_off(kit):
    # float32: after exp(-30) the cumulative sum is already 1.0, so a nucleus run at top_p=1.0 would
    # drop the last token; "1.0 = off" must skip the nucleus, not run it.
    logits = torch.tensor([[0.0, -30.0, -1.0, 0.5, -2.0], [1.5, 0.3, -0.7, -40.0, 0.9]], dtype=torch.float32)
    for top_k, top_p in ((0, 1.0), (None, None), (5, 1.0)):
        got = kit.user((logits, 1.0, top_k, top_p), dtype="float32")
        try:
            compare(got, logits.clone(), t("top_k={top_k}, top_p={top_p}: filtered logits", top_k=top_k, top_p=top_p),
                    "(B, V)")
        except Fail as fail:
            raise Fail(t("{fail}. top_k None or 0 and top_p None or 1.0 mean 'no filtering': skip the step (`if top_p "
                         "is not None and top_p < 1.0`), do not run the nucleus with top_p=1.0", fail=fail)) from None


def _strictly_before(logits: torch.Tensor, top_p: float) -> list[int]:
    """Tokens kept per row under the contract's own words: a token stays iff the tokens strictly more probable
    than it sum to < top_p (tied tokens all stay or all go)."""
    p = logits.softmax(-1)
    before = (p.unsqueeze(-2) * (p.unsqueeze(-2) > p.unsqueeze(-1))).sum(-1)
    return (before < top_p).sum(-1).tolist()


@check("properties", "ties at the cut: every token tied with the k-th value is kept; at the nucleus's cut, tied tokens are cut in sorted order or all kept")
def ties_at_the_cut(kit):
    # Exact in float64: four equal logits give probabilities of exactly 0.25, so the mass before the
    # third is exactly 0.5. Counted per row, since which of tied tokens is "first" is not the contract.
    # Two readings of the nucleus meet at a tie, and the contract accepts both: sorted order (Hugging
    # Face: two of the four stay) and "the tokens strictly more probable sum to < top_p" (all four stay); a third,
    # "dropped once the mass before it is more than top_p" (three stay), is the other wide reading: accepted, asked.
    accepted = None
    for logits, top_k, top_p, rule in (
            (torch.tensor([[3.0, 1.0, 1.0, 1.0, 0.0], [2.0, 2.0, 2.0, -1.0, 0.5]], dtype=torch.float64), 2, None,
             "top-k keeps every token at least as large as the k-th largest (scores < kth are removed), so ties at "
             "the k-th value are all kept: torch.topk's indices keep exactly k and drop the tied ones arbitrarily"),
            (torch.zeros(2, 4, dtype=torch.float64), None, 0.5,
             "with four equal probabilities of 0.25 and top_p=0.5, the nucleus keeps two tokens in sorted order "
             "(the mass before the third reaches top_p) or all four (none is strictly more probable than another); "
             "any other count misplaces the boundary: in sorted order a token is dropped exactly when the mass "
             "before it reaches top_p (before >= top_p)")):
        got = kit.user((logits, 1.0, top_k, top_p))
        want = kit.reference((logits, 1.0, top_k, top_p))
        if not isinstance(got, torch.Tensor) or got.shape != want.shape:
            return  # the shapes check says what is wrong
        mine, theirs = _kept(got).sum(-1).tolist(), _kept(want).sum(-1).tolist()
        if mine != theirs and top_p is not None and mine == _more_than_before(logits, top_p):
            accepted = t("with four equal probabilities of 0.25 and top_p=0.5 you keep {mine} tokens per row: a token "
                         "is dropped only when the mass before it is MORE than top_p, the rule of Hugging Face's "
                         "top_k_top_p_filtering (cumulative_probs > top_p, shifted right by one), the most copied top-p "
                         "code. Both readings are in wide use and differ only when the mass before a token equals "
                         "top_p exactly. Follow-up: which is the smallest set whose mass reaches top_p? This kata's "
                         "reference drops a token once the mass before it reaches top_p (before >= top_p), as "
                         "Holtzman et al. define the nucleus and as Hugging Face's TopPLogitsWarper computes it",
                         mine=mine)
        elif mine != theirs and (top_p is None or mine != _strictly_before(logits, top_p)):
            raise Fail(t("logits {logits}, top_k={top_k}, top_p={top_p}: you keep {mine} tokens per row, expected "
                         "{theirs}", logits=logits.tolist(), top_k=top_k, top_p=top_p, mine=mine, theirs=theirs),
                       t(rule))
    if accepted:
        raise Accepted(accepted)


def _more_than_before(logits: torch.Tensor, top_p: float) -> list[int]:
    """Tokens kept per row when a token is dropped only once the mass before it, in sorted order, is MORE than
    top_p (Hugging Face's top_k_top_p_filtering)."""
    p = logits.softmax(-1).sort(dim=-1, descending=True).values
    return ((p.cumsum(-1) - p) <= top_p).sum(-1).tolist()


@check("properties", "neutral values change nothing else: temperature 1 still filters, top_k >= V and top_p=1.0 keep every token")
def neutral_values(kit):
    c = CASES[2]
    logits = _logits(c)
    for temperature, top_k, top_p in ((1.0, c.top_k, c.top_p), (c.temperature, c.V, c.top_p),
                                      (c.temperature, c.top_k, 1.0), (1.0, c.V, None)):
        got = kit.user((logits, temperature, top_k, top_p))
        try:
            compare(got, kit.reference((logits, temperature, top_k, top_p)),
                    t("temperature={temperature}, top_k={top_k}, top_p={top_p}: filtered logits",
                      temperature=temperature, top_k=top_k, top_p=top_p), "(B, V)")
        except Fail as fail:
            # The cause is the neutral value only where the same logits with the case's own settings come out right
            usual = (logits, c.temperature, c.top_k, c.top_p)
            blamed = matches(kit.user(usual), kit.reference(usual))
            raise Fail(fail.message, t("a branch taken on a neutral value (temperature 1, top_k >= V, top_p 1.0) "
                                       "must only skip its own step: the other steps still apply") if blamed else None) \
                from None


@check("properties", "temperature <= 0 raises ValueError in filter_logits")
def bad_temperature(kit):
    logits = _logits(CASES[0])
    expect_raises([(f"filter_logits(logits, temperature={temp})", lambda temp=temp: kit.user((logits, temp, None, None)))
                   for temp in (0.0, -0.5)],
                  t("dividing by a temperature <= 0 gives inf or flips the distribution (sample_next_token handles "
                    "temperature 0 as greedy itself)"))


def describe_short(value):
    return t("a tensor of shape {shape}", shape=tuple(value.shape)) if isinstance(value, torch.Tensor) else type(value).__name__


# ----------------------------------------------------------------------------- sample_next_token checks

_N = 20_000  # draws per row: a frequency of p is measured to ~sqrt(p / N), ~0.3 percentage points at p = 0.2
_ALPHA = 1e-7  # per chi-square test; at most 10 tests in a run: < 1e-6 for a correct sampler
_SAMPLE_CASES = [
    case(41, B=3, V=9, temperature=0.8, top_k=6, top_p=0.85, seed=11),
    case(42, B=2, V=7, temperature=1.5, top_k=None, top_p=None, seed=12),
    case(43, B=4, V=6, temperature=0.6, top_k=4, top_p=None, seed=13, lead=5),
]


def _sample_logits(c):
    """Logits whose eligible tokens all have probability >= 0.02 (>= 400 expected draws each)."""
    for attempt in range(200):
        x = torch.randn(c.B, c.V, generator=c.generator(attempt), dtype=torch.float64)
        p = _filter(x, c.temperature, c.top_k, c.top_p).softmax(-1)
        if ((p == 0) | (p >= 0.02)).all() and _clear_of_boundaries(x, c.temperature, c.top_k, c.top_p):
            return x
    raise AssertionError(f"{c.label}: no suitable logits")


def _draw(kit, c, logits=None, seed=None, temperature=None):
    logits = _sample_logits(c) if logits is None else logits
    repeated = logits.repeat_interleave(_N, dim=0)  # (B * N, V): row b's logits N times
    if "lead" in c.dims:  # (B * N / lead, lead, V): three axes, the same rows in the same order
        repeated = repeated.view(-1, c.lead, c.V)
    g = torch.Generator().manual_seed(c.seed if seed is None else seed)
    temp = c.temperature if temperature is None else temperature
    ids = kit.user((repeated, temp, c.top_k, c.top_p, g), target="sample_next_token")
    _expect_ids(ids, tuple(repeated.shape[:-1]), c.V, t("{label}, logits {shape}", label=c.label,
                                                        shape=tuple(repeated.shape)))
    return ids.reshape(-1)


def _expect_ids(ids, shape, V, where):
    if not isinstance(ids, torch.Tensor):
        raise Fail(t("{where}: sample_next_token should return a (...) int64 tensor, got {got}", where=where,
                     got=describe_short(ids)))
    if tuple(ids.shape) != shape:
        extra = (t(" (torch.multinomial returns (N, 1): drop that axis)") if tuple(ids.shape) == (*shape, 1) else "")
        raise Fail(t("{where}: sample_next_token should return the logits' shape without V, {shape}, got {got}{extra}",
                     where=where, shape=shape, got=tuple(ids.shape), extra=extra))
    if ids.dtype != torch.int64:
        raise Fail(t("{where}: sample_next_token should return int64 token ids, got {dtype}", where=where,
                     dtype=ids.dtype))
    if ids.numel() and (ids.min() < 0 or ids.max() >= V):
        raise Fail(t("{where}: token ids must lie in [0, V) = [0, {V}), got {low}..{high}", where=where, V=V,
                     low=int(ids.min()), high=int(ids.max())))


def chi_square_p_value(counts, probs):
    """Upper tail of Pearson's chi-square statistic over the tokens with probs > 0."""
    support = probs > 0
    expected = probs[support] * counts.sum()
    stat = float(((counts[support] - expected) ** 2 / expected).sum())
    df = int(support.sum()) - 1
    if df == 0:
        return 1.0, stat
    return float(torch.special.gammaincc(torch.tensor(df / 2, dtype=torch.float64),
                                         torch.tensor(stat / 2, dtype=torch.float64))), stat


# Wrong distributions a sampler may draw from: named when the draws fit one of them.
_SAMPLER_MISTAKES = [
    Mistake("temperature ignored", lambda x, c: _filter(x, 1.0, c.top_k, c.top_p).softmax(-1),
            "your draws follow the distribution WITHOUT temperature: sample from softmax(logits / temperature) after "
            "filtering (dividing the probabilities by T changes nothing: multinomial renormalizes them)"),
    Mistake("temperature multiplied", lambda x, c: _filter(x, 1 / c.temperature, c.top_k, c.top_p).softmax(-1),
            "your draws follow softmax(logits * temperature) (or p ** temperature): divide the logits by the temperature"),
]


@check("properties", "sample_next_token never draws a token that filter_logits removes")
def never_ineligible(kit):
    for c in _SAMPLE_CASES:
        logits = _sample_logits(c)
        ids = _draw(kit, c, logits)
        allowed = torch.isfinite(_filter(logits, c.temperature, c.top_k, c.top_p))  # (B, V)
        ok = allowed.repeat_interleave(_N, dim=0).gather(1, ids[:, None]).squeeze(1)
        if not ok.all():
            i = int((~ok).nonzero()[0])
            # the sampler is to blame only where the user's own filter keeps the right tokens
            mine = kit.user((logits, c.temperature, c.top_k, c.top_p))
            blamed = isinstance(mine, torch.Tensor) and mine.shape == allowed.shape and \
                bool(torch.equal(torch.isfinite(mine), allowed))
            raise Fail(t("{label}: row {row} drew token {token}, which top-k/top-p removes (eligible: {eligible})",
                         label=c.label, row=i // _N, token=int(ids[i]),
                         eligible=allowed[i // _N].nonzero().flatten().tolist()),
                       t("your sampler draws tokens the filter removes: draw from "
                         "softmax(filter_logits(logits, temperature, top_k, top_p)), not from the raw logits")
                       if blamed else None)


@check("properties", "sample_next_token's frequencies match softmax(filter_logits(...)) (chi-square, N = 20000 per row)")
def frequencies(kit):
    for c in _SAMPLE_CASES:
        logits = _sample_logits(c)
        ids = _draw(kit, c, logits).view(c.B, _N)
        want = _filter(logits, c.temperature, c.top_k, c.top_p).softmax(-1)  # (B, V)
        counts = torch.stack([torch.bincount(ids[b], minlength=c.V) for b in range(c.B)]).to(torch.float64)
        if (counts == _N).any(-1).all() and torch.equal(ids[:, 0], logits.argmax(-1)):
            raise Fail(t("{label}: every draw is the most probable token", label=c.label),
                       t("that is greedy decoding: sample with "
                         "torch.multinomial(softmax(filtered logits), 1, generator=generator)"))
        for b in range(c.B):
            p_value, stat = chi_square_p_value(counts[b], want[b])
            if p_value >= _ALPHA:
                continue
            freq = (counts[b] / _N).tolist()
            named = kit.name_mistake((), counts[b], _SAMPLER_MISTAKES, run=lambda m: m.impl(logits, c)[b],
                                     same=lambda got, p: bool((p > 0).equal(want[b] > 0))
                                     and chi_square_p_value(got, p)[0] >= _ALPHA)
            values = dict(label=c.label, b=b, freq=[round(f, 3) for f in freq],
                          want=[round(p, 3) for p in want[b].tolist()], stat=stat, p_value=p_value, alpha=_ALPHA)
            if named:
                raise Fail(t("{label}, row {b}: your frequencies {freq} do not fit the expected probabilities {want} "
                             "(chi-square {stat:.1f}, p-value {p_value:.1e} < {alpha:g})", **values), named)
            raise Fail(t("{label}, row {b}: your frequencies {freq} do not fit the expected probabilities {want} "
                         "(chi-square {stat:.1f}, p-value {p_value:.1e} < {alpha:g}): draw each row from "
                         "softmax(filter_logits(logits, temperature, top_k, top_p), dim=-1)", **values), named)


@check("properties", "sample_next_token draws with the caller's generator: the same seed gives the same draws")
def reproducible(kit):
    c = _SAMPLE_CASES[0]
    logits = _sample_logits(c)
    first, again = _draw(kit, c, logits, seed=5), _draw(kit, c, logits, seed=5)
    if not torch.equal(first, again):
        raise Fail(t("{label}: two calls with generators seeded alike gave different draws", label=c.label),
                   t("your sampler draws from the global random state: pass the caller's generator to the sampler "
                     "(torch.multinomial(probs, 1, generator=generator))"))
    other = _draw(kit, c, logits, seed=6)
    if torch.equal(first, other):
        raise Fail(t("{label}: generators with different seeds gave the same draws", label=c.label),
                   t("your sampler does not use the generator it is given: pass it to the sampler "
                     "(torch.multinomial(probs, 1, generator=generator)), and reseed nothing"))


@check("properties", "temperature 0 is greedy: the argmax of every row, whatever top_k and top_p")
def greedy(kit):
    for c in _SAMPLE_CASES + [CASES[-1]]:  # the last: logits (B, T, V)
        logits = inputs(c, "float64")[0] if c in CASES else _sample_logits(c)
        g = torch.Generator().manual_seed(3)
        ids = kit.user((logits, 0.0, c.top_k, c.top_p, g), target="sample_next_token")
        _expect_ids(ids, tuple(logits.shape[:-1]), c.V, t("{label}, temperature=0", label=c.label))
        compare(ids, logits.argmax(-1), t("{label}, temperature=0: token ids (the argmax)", label=c.label), "(...)")


@check("properties", "sample_next_token raises ValueError for a negative temperature")
def negative_temperature(kit):
    c = _SAMPLE_CASES[1]
    expect_raises([("sample_next_token(logits, temperature=-1.0)",
                    lambda: kit.user((_sample_logits(c), -1.0, None, None, torch.Generator().manual_seed(0)),
                                     target="sample_next_token"))],
                  t("a negative temperature flips the distribution: the least likely token becomes the likeliest"))


# Every branch the contract has: temperature 1 (nothing to divide) or not, each filter on or off (top_k >= V and
# top_p = 1.0 are "off" too). An in-place write reaches the caller's tensor only where no earlier out-of-place
# step has made a copy (at temperature 1, `scores = logits` is the caller's own tensor), so each branch is run.
_BRANCHES = [(temperature, top_k, top_p) for temperature in (1.0, 0.7) for top_k in (None, 4, 99)
             for top_p in (None, 0.8, 1.0)]


def _modified_on(kit, target: str, logits, branches, extra=()) -> list:
    """[(temperature, top_k, top_p, what differs)] for every branch on which target wrote into the caller's logits."""
    modified = []
    for temperature, top_k, top_p in branches:
        sent = (logits.clone(), temperature, top_k, top_p, *[e() if callable(e) else e for e in extra])
        _, after = kit.user(sent, target=target, return_args=True)
        try:
            compare(after[0], logits, "logits", exact=True)
        except Fail as fail:
            modified.append((temperature, top_k, top_p, fail.message))
    return modified


def _expect_unchanged(kit, target: str, logits, branches, extra=()) -> None:
    modified = _modified_on(kit, target, logits, branches, extra)
    if not modified:
        return
    temperature, top_k, top_p, what = modified[0]
    called = f"{target}(logits, temperature={temperature}, top_k={top_k}, top_p={top_p})"  # code: never translated
    if len(modified) == len(branches):
        raise Fail(t("{called} modified its input ({fail}): use out-of-place operations (logits / temperature, "
                     "masked_fill, not masked_fill_ or /=)", called=called, fail=what))
    # The contrast: a branch left clean that differs from the first modified one in as few settings as possible,
    # at temperature 1 preferably in the temperature alone (the branch that skips the division, and its copy).
    clean = [b for b in branches if b not in [m[:3] for m in modified]]
    other = min(clean, key=lambda b: (sum(x != y for x, y in zip(b, (temperature, top_k, top_p))),
                                      temperature != 1.0 or b[1:] != (top_k, top_p)))
    if temperature == 1.0 and other[1:] == (top_k, top_p):
        why = t("your code writes into the caller's logits at temperature 1 and not at temperature {other}: at "
                "temperature 1 nothing has copied them yet (no division), so an in-place operation after it "
                "(masked_fill_, logits[...] = ...) writes into the caller's tensor. Compute new tensors: "
                "scores = scores.masked_fill(...), not masked_fill_", other=other[0])
    else:
        why = t("on some branches your code writes into the caller's logits: an in-place operation (masked_fill_, "
                "/=, logits[...] = ...) reaches the caller's tensor wherever no earlier out-of-place step has made a "
                "copy. Compute new tensors on every branch: scores = logits / temperature, "
                "scores = scores.masked_fill(...)")
    raise Fail(t("{called} modified its input ({fail}); with temperature={temperature}, top_k={top_k}, top_p={top_p} "
                 "it does not", called=called, fail=what, temperature=other[0], top_k=other[1], top_p=other[2]), why)


@check("hygiene", "filter_logits leaves the caller's logits unchanged on every branch: temperature 1 or not, each filter on or off")
def filter_hygiene_every_branch(kit):
    _expect_unchanged(kit, TARGET, _logits(CASES[0]), _BRANCHES)


@check("hygiene", "sample_next_token leaves the caller's logits unchanged on every branch, temperature 0 included")
def sampler_hygiene(kit):
    c = _SAMPLE_CASES[0]
    branches = [(0.0, c.top_k, c.top_p)] + [(temp, k, p) for temp in (1.0, c.temperature) for k in (None, c.top_k)
                                             for p in (None, c.top_p)]
    _expect_unchanged(kit, "sample_next_token", _sample_logits(c), branches,
                      extra=(lambda: torch.Generator().manual_seed(1),))
