"""Hidden checks: flash-decoding's split-KV attention, a chunk's (output, lse) and their exact merge.

The standard checks run attend_chunk on partly masked chunks (every row sees a key, so the gradients
are finite). The rows that see no key, the empty chunk, and merge are checked below: merge on chunks
of a longer key sequence (one of them fully masked for some rows, one empty), then against attention
over all the keys at once.
"""

import math

import torch

from checker.kit import Fail, Mistake, case, check, compare, expect_raises, expect_structure
from checker.lang import t

TARGET = "attend_chunk"
OUTPUTS = [("out", "(B, H, T_q, d_v)"), ("lse", "(B, H, T_q)")]
BATCH_INDEPENDENT = True
DEVICE = True  # the -inf fill and the zeros of a row with no key are made inside: they must follow q's device

# Every dimension its own size; four mask shapes: a padding mask (B, 1, 1, T_c), none (decoding, T_q = 1),
# a causal band (T_q, T_c) and a random (B, H, T_q, T_c) mask. Every row sees at least one key here.
CASES = [
    case(1, B=2, H=3, T_q=4, T_c=7, d_k=5, d_v=6, masks="padding (B, 1, 1, T_c)"),
    case(2, B=3, H=2, T_q=1, T_c=9, d_k=4, d_v=3, masks="none"),
    case(3, B=2, H=4, T_q=5, T_c=6, d_k=3, d_v=7, masks="causal (T_q, T_c)"),
    case(4, B=3, H=2, T_q=6, T_c=5, d_k=8, d_v=4, masks="random (B, H, T_q, T_c)"),
]
TIMING = case(5, B=4, H=8, T_q=1, T_c=512, d_k=64, d_v=64, masks="none")

# Rows that see no key: a (B, H, T_q, T_c) mask with whole rows False (some heads, some queries), and an
# empty chunk (T_c = 0). Case 6's q and k are × 20, scores up to ~1000: exp(s) without the row's max overflows,
# so "the max kept at -inf" and "no max at all" give different outputs.
_BLIND = case(6, B=2, H=3, T_q=4, T_c=5, d_k=3, d_v=6, masks="random, rows 1 and 3 see no key",
              scores="large: q, k × 20")
_EMPTY = case(7, B=2, H=3, T_q=4, T_c=0, d_k=5, d_v=6, masks="none")

# merge: the keys of one attention split into n chunks of unequal sizes; a padding mask hides the last chunk
# entirely from batch row 1 (hidden_last), chunk 1 is empty (empty_chunk), one chunk alone (case 13), scores of
# several hundred (case 14: q, k × 20, lse up to a thousand or more, so exp(lse) is inf even in float64).
_MERGE_CASES = [
    case(11, B=2, H=3, T_q=4, d_k=5, d_v=6, n=3, T_k=13, empty_chunk=0, hidden_last=1),
    case(12, B=3, H=2, T_q=1, d_k=4, d_v=3, n=4, T_k=17, empty_chunk=1, hidden_last=0),
    case(13, B=2, H=4, T_q=3, d_k=3, d_v=5, n=1, T_k=8, empty_chunk=0, hidden_last=0),
    case(14, B=2, H=2, T_q=5, d_k=6, d_v=4, n=3, T_k=12, empty_chunk=0, hidden_last=0, scores="large: q, k × 20"),
]


def _mask(c, T_k):
    g = c.generator(salt=3)
    if c.masks.startswith("padding"):
        lengths = torch.tensor([T_k] + [int(torch.randint(1, T_k + 1, (1,), generator=g)) for _ in range(c.B - 1)])
        return (torch.arange(T_k) < lengths[:, None])[:, None, None, :]  # (B, 1, 1, T_k)
    if c.masks.startswith("causal"):
        return torch.arange(T_k)[None, :] <= torch.arange(c.T_q)[:, None] + (T_k - c.T_q)  # (T_q, T_k)
    if c.masks.startswith("random"):
        mask = torch.rand(c.B, c.H, c.T_q, T_k, generator=g) < 0.6
        mask[..., 0] = True  # every row sees a key ...
        if "no key" in c.masks:
            mask[0, 1, 1], mask[1, :, 3], mask[1, 2, 0] = False, False, False  # ... but these
        return mask
    return None


def inputs(c, dtype):
    d = getattr(torch, dtype)
    g = c.generator()
    scale = 20.0 if "scores" in c.extra else 1.0
    q = scale * torch.randn(c.B, c.H, c.T_q, c.d_k, generator=g, dtype=torch.float64)
    k = scale * torch.randn(c.B, c.H, c.T_c, c.d_k, generator=g, dtype=torch.float64)
    v = torch.randn(c.B, c.H, c.T_c, c.d_v, generator=g, dtype=torch.float64)
    return q.to(d), k.to(d), v.to(d), _mask(c, c.T_c)


# ----------------------------------------------------------------------------- merge's inputs


def _attention(q, k, v, mask):
    """Attention written out once more, with the log-sum-exp: (out, lse); a row with no key gives (0, -inf)."""
    s = q @ k.mT / math.sqrt(q.shape[-1])
    if mask is not None:
        s = s.masked_fill(~mask, float("-inf"))
    lse = torch.logsumexp(s, dim=-1)
    seen = torch.isfinite(lse)[..., None]
    p = torch.exp(s - torch.where(seen, lse[..., None], 0.0))
    return torch.where(seen, p @ v, 0.0), lse


def _bounds(c):
    """Where the chunks start and end: n chunks over T_k keys, of unequal sizes; one empty where split says."""
    g = c.generator(salt=4)
    cuts = sorted(torch.randperm(c.T_k - 1, generator=g)[: c.n - 1].add(1).tolist())
    if c.empty_chunk:  # chunk 1 empty: two equal cuts
        cuts[1] = cuts[0]
    return list(zip([0, *cuts], [*cuts, c.T_k]))


def _full(c):
    """q, k, v and the mask of the whole attention (float64)."""
    g = c.generator()
    scale = 20.0 if "scores" in c.extra else 1.0
    q = scale * torch.randn(c.B, c.H, c.T_q, c.d_k, generator=g, dtype=torch.float64)
    k = scale * torch.randn(c.B, c.H, c.T_k, c.d_k, generator=g, dtype=torch.float64)
    v = torch.randn(c.B, c.H, c.T_k, c.d_v, generator=g, dtype=torch.float64)
    mask = None
    if c.hidden_last:  # batch row 1 sees no key of the last chunk (a padded sequence)
        mask = torch.ones(c.B, 1, 1, c.T_k, dtype=torch.bool)
        mask[1, ..., _bounds(c)[-1][0]:] = False
    return q, k, v, mask


def _chunks(c):
    """The whole attention and, per chunk, its (q, k, v, mask) (float64)."""
    q, k, v, mask = _full(c)
    parts = [(q, k[..., a:b, :], v[..., a:b, :], None if mask is None else mask[..., a:b]) for a, b in _bounds(c)]
    return (q, k, v, mask), parts


def merge_inputs(c, dtype="float64"):
    """(outputs, lses): the chunks' results, computed in float64 and given in dtype."""
    d = getattr(torch, dtype)
    results = [_attention(*part) for part in _chunks(c)[1]]
    return [o.to(d) for o, _ in results], [s.to(d) for _, s in results]


_MERGE_OUTPUTS = [("out", "(B, H, T_q, d_v)"), ("lse", "(B, H, T_q)")]
_SHIFT = 750.0


# ----------------------------------------------------------------------------- named mistakes
# Two the error model cannot express: its rewrites have no base-2 logarithm (log2, exp2 are no neighbours of log,
# exp) and no rule that replaces a computed weight by a constant 1.

_LOG2E = 1.0 / math.log(2.0)


def _base_2(q, k, v, mask=None):
    out, lse = _attention(q, k, v, mask)
    return out, lse * _LOG2E


def _equal_weights(outputs, lses):
    lse = torch.stack(lses, dim=0)
    seen = torch.isfinite(lse).to(lse.dtype)
    out = (torch.stack(outputs, dim=0) * seen.unsqueeze(-1)).sum(dim=0) / seen.sum(dim=0).clamp(min=1).unsqueeze(-1)
    return out, torch.logsumexp(lse, dim=0)


MISTAKES = [
    Mistake("lse in base 2", _base_2,
            "your lse is log2 of the sum of exponentials, FlashInfer's convention (it computes in exp2 and log2): "
            "the contract's lse is the natural log-sum-exp, torch.logsumexp(scores, dim=-1), the number vLLM's and "
            "flash-attention's merges read; a merge that mixes the two bases weighs the chunks wrongly"),
    Mistake("chunks weighed equally", _equal_weights,
            "your merge averages the chunks' outputs with equal weights: chunk i must count by its share of the "
            "softmax mass, exp(lse_i - lse) with lse = logsumexp over the chunks, so a chunk of 2 keys or of low "
            "scores counts less than the one the query attends to"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "attend_chunk(q, k, v, mask) and merge(outputs, lses) are functions")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["q", "k", "v", "mask"])
    expect_structure(kit, "merge", module=False, params=["outputs", "lses"])


@check("masking", "attend_chunk: a row that sees no key of the chunk gives out = 0 and lse = -inf, not NaN")
def rows_without_keys(kit):
    for c in (_BLIND, _EMPTY):
        args = inputs(c, "float64")
        got = kit.user(args)
        kit.judge(c.label, args, got, kit.reference(args), OUTPUTS, target=TARGET,
                  others=tuple(inputs(o, "float64") for o in (*CASES, _BLIND, _EMPTY) if o is not c))


def _other_merges(c, dtype) -> tuple:
    """The merge cases but c, as inputs: the error model's change must fit the user's merge on them too."""
    return tuple(merge_inputs(o, dtype) for o in _MERGE_CASES if o is not c)


def _merge_user(kit, outputs, lses):
    return kit.user((outputs, lses), target="merge")


@check("numerics", "merge: equals the reference's merge, float64 and float32 (a chunk hidden, a chunk empty, "
                   "one chunk, lse above 700)")
def merge_numerics(kit):
    for dtype in ("float64", "float32"):
        for c in _MERGE_CASES:
            args = merge_inputs(c, dtype)
            got = _merge_user(kit, *args)
            want = kit.reference(args, target="merge")
            kit.judge(c.label, args, got, want, _MERGE_OUTPUTS, target="merge", dtype=dtype,
                      what=t(", {dtype}", dtype=dtype), others=_other_merges(c, dtype))


@check("masking", "merge: a chunk with lse = -inf is ignored, whatever its output holds; a row with lse = -inf in "
                  "every chunk gives out = 0 and lse = -inf")
def merge_ignores_empty_chunks(kit):
    c = _MERGE_CASES[0]
    outputs, lses = merge_inputs(c)
    noisy = [o.clone() for o in outputs]
    noisy[-1][1] = 5.0 * torch.randn(noisy[-1][1].shape, generator=c.generator(salt=8), dtype=torch.float64)
    want = kit.reference((outputs, lses), target="merge")
    got = _merge_user(kit, noisy, lses)
    kit.judge(c.label, (noisy, lses), got, want, _MERGE_OUTPUTS, target="merge",
              what=t(", the output of the last chunk set to random values where its lse is -inf"),
              others=_other_merges(None, "float64"))
    # every lse + 750 (the same attention with every score + 750: the outputs do not change), so that exp(lse_i)
    # without the largest lse subtracted overflows
    blind, zeros = [s + _SHIFT for s in lses], [o.clone() for o in outputs]
    for s, o in zip(blind, zeros):  # batch row 1 sees no key in any chunk
        s[1], o[1] = float("-inf"), 0.0
    got = _merge_user(kit, zeros, blind)
    kit.judge(c.label, (zeros, blind), got, kit.reference((zeros, blind), target="merge"), _MERGE_OUTPUTS,
              target="merge", what=t(", every lse + {shift:g}, batch row 1 with lse -inf in every chunk (it sees no "
                                     "key)", shift=_SHIFT), others=_other_merges(None, "float64"))


@check("properties", "attend_chunk over the chunks, then merge, equals attention over all the keys at once")
def end_to_end(kit):
    for c in _MERGE_CASES[:3]:
        whole, parts = _chunks(c)
        want_out, want_lse = _attention(*whole)
        results = [kit.user(part) for part in parts]
        if not all(isinstance(r, (tuple, list)) and len(r) == 2 for r in results):
            return  # the shapes check reports it
        got = _merge_user(kit, [r[0] for r in results], [r[1] for r in results])
        if not isinstance(got, (tuple, list)) or len(got) != 2:
            return  # merge's checks report it
        try:
            compare(got[0], want_out, "out", "(B, H, T_q, d_v)")
            compare(got[1], want_lse, "lse", "(B, H, T_q)")
        except Fail as fail:
            raise Fail(t("{label}: your merge of your attend_chunk's {n} chunk(s) differs from softmax(q kᵀ / √d_k) v "
                         "over all {T_k} keys: {fail}", label=c.label, n=c.n, T_k=c.T_k, fail=fail.message),
                       t("each chunk's lse must be the natural log-sum-exp of the same scaled scores the output is "
                         "normalised with, and merge must weigh chunk i by exp(lse_i - lse)")) from None


@check("properties", "merge raises ValueError for no chunks, or for a different number of outputs and lses")
def merge_raises(kit):
    outputs, lses = merge_inputs(_MERGE_CASES[0])
    expect_raises([("merge([], [])", lambda: _merge_user(kit, [], [])),
                   ("merge(outputs, lses[:-1])", lambda: _merge_user(kit, outputs, lses[:-1]))],
                  t("a merge of nothing has no shape to return, and a chunk without its lse cannot be weighed"))
