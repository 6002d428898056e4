"""Hidden checks: CTRL's repetition penalty as Hugging Face applies it, then OpenAI's frequency and presence
penalties."""

import torch

from checker.kit import Fail, Mistake, case, check, compare, expect_structure
from checker.lang import t

TARGET = "apply_penalties"
OUTPUTS = [("penalised logits", "(B, V)")]
GRADIENTS = False  # applied at inference; HF's gather-scatter counts a repeated token's gradient once per occurrence
BATCH_INDEPENDENT = True  # each row's penalties come from its own generated tokens

# Every dimension its own size. Each row's generated tokens hold its largest logit twice (a positive logit, repeated)
# and its smallest once (a negative one), so dividing and multiplying both show, and so does penalising a repeat
# twice. The settings: CTRL's 1.2 with both OpenAI penalties; CTRL alone; OpenAI's alone, the frequency penalty
# negative; a penalty below 1 (which favours repeats) with a negative presence penalty.
CASES = [
    case(1, B=3, V=11, T=6, penalty=1.2, frequency_penalty=0.5, presence_penalty=0.3),
    case(2, B=2, V=17, T=9, penalty=1.5, frequency_penalty=0.0, presence_penalty=0.0),
    case(3, B=4, V=7, T=5, penalty=1.0, frequency_penalty=-0.4, presence_penalty=0.8),
    case(4, B=5, V=13, T=12, penalty=0.7, frequency_penalty=0.25, presence_penalty=-0.5),
]
TIMING = case(5, B=64, V=32000, T=512, penalty=1.2, frequency_penalty=0.5, presence_penalty=0.3)


def inputs(c, dtype):
    g = c.generator(salt=1)
    logits = 2.0 * torch.randn(c.B, c.V, generator=g, dtype=torch.float64)
    generated = torch.randint(0, c.V, (c.B, c.T), generator=g)
    generated[:, 0] = logits.argmax(dim=1)  # a positive logit ...
    generated[:, 1] = logits.argmin(dim=1)  # ... a negative one ...
    generated[:, -1] = generated[:, 0]  # ... and the positive one again: a repeat
    return logits.to(getattr(torch, dtype)), generated, c.penalty, c.frequency_penalty, c.presence_penalty


# ----------------------------------------------------------------------------- named mistakes
# One the error model cannot write: a loop that rescales a logit once per occurrence has no single rewrite in the
# reference's gather-and-scatter, which rescales each token once whatever its count.


def _per_occurrence(logits, generated, penalty=1.0, frequency_penalty=0.0, presence_penalty=0.0):
    out = logits.clone()
    for b in range(generated.shape[0]):
        for token in generated[b].tolist():
            out[b, token] = out[b, token] * penalty if out[b, token] < 0 else out[b, token] / penalty
    counts = torch.zeros_like(logits).scatter_add(1, generated, torch.ones_like(generated, dtype=logits.dtype))
    return out - counts * frequency_penalty - (counts > 0).to(logits.dtype) * presence_penalty


MISTAKES = [
    Mistake("CTRL's penalty once per occurrence", _per_occurrence,
            "a token generated k times has its logit rescaled k times (by penalty^k): CTRL's penalty, as Hugging "
            "Face applies it, rescales each generated token ONCE, gather, rescale and scatter, or a loop over "
            "set(generated[b].tolist()); how often a token came is the frequency penalty's business"),
]


# ----------------------------------------------------------------------------- checks


@check("structure", "apply_penalties(logits, generated, penalty, frequency_penalty, presence_penalty) is a function")
def structure(kit):
    expect_structure(kit, TARGET, module=False,
                     params=["logits", "generated", "penalty", "frequency_penalty", "presence_penalty"])


@check("numerics", "the defaults (penalty=1, frequency_penalty=0, presence_penalty=0) leave the logits as they are")
def defaults(kit):
    c = CASES[0]
    logits, generated, *_ = inputs(c, "float64")
    got = kit.user((logits, generated))
    compare(got, logits, t("{label}, apply_penalties(logits, generated): the logits", label=c.label), "(B, V)")


@check("properties", "a penalty above 1 never makes a generated token more likely, and tokens never generated keep "
                     "their logits")
def never_favoured(kit):
    c = CASES[1]
    logits, generated, penalty, *_ = inputs(c, "float64")
    got = kit.user((logits, generated, penalty, 0.0, 0.0))
    if not isinstance(got, torch.Tensor) or got.shape != logits.shape:
        return  # the shapes check reports it
    seen = torch.zeros_like(logits, dtype=torch.bool).scatter(1, generated, True)
    raised = seen & (got > logits)
    if bool(raised.any()):
        b, v = divmod(int(raised.reshape(-1).nonzero()[0]), c.V)
        raise Fail(t("{label}: token {v} of row {b} was generated and its logit went up, from {before:.6g} to "
                     "{after:.6g}", label=c.label, v=v, b=b, before=logits[b, v].item(), after=got[b, v].item()),
                   t("dividing a NEGATIVE logit by the penalty brings it closer to 0, which makes the token MORE "
                     "likely: multiply negative logits by the penalty, divide positive ones (the fix Hugging Face "
                     "made to CTRL's rule, which divided every logit)"))
    moved = ~seen & (got != logits)
    if bool(moved.any()):
        b, v = divmod(int(moved.reshape(-1).nonzero()[0]), c.V)
        raise Fail(t("{label}: token {v} of row {b} was never generated, yet its logit changed from {before:.6g} to "
                     "{after:.6g}", label=c.label, v=v, b=b, before=logits[b, v].item(), after=got[b, v].item()),
                   t("only the tokens in generated[b] are penalised: gather their logits, rescale, and scatter them "
                     "back into a copy of the row"))
