"""Hidden checks: CLIP's symmetric InfoNCE with a learnable, capped logit scale (open_clip's ClipLoss)."""

import math

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, as_outputs, case, check, compare, expect_raises, expect_structure, matches
from checker.lang import t

TARGET = "clip_loss"
OUTPUTS = [("loss", "()"), ("logits_per_image", "(N, N)")]

# Every dimension its own size, N != D. The embeddings have norms between 0.5 and 3, so that a missing
# normalisation shows; text i is image i plus noise (the diagonal scores highest, as after some training, so that
# the labels matter), and the texts' norms differ from the images'. The scales: CLIP's initial t = log(1/0.07)
# (scale 14.3), t = 5 (scale 148) capped at 100, the same t with no cap, t = 0 (scale 1), and a cap of 2.5 below both
# the scale exp(3) = 20 and t = 3 itself, so that a cap on t and a cap on exp(t) differ, and t read as the scale too.
CASES = [
    case(1, N=4, D=6, t=math.log(1 / 0.07), max_scale=100.0),
    case(2, N=6, D=3, t=5.0, max_scale=100.0),
    case(3, N=3, D=8, t=5.0, max_scale="None"),
    case(4, N=5, D=7, t=0.0, max_scale=100.0),
    case(5, N=7, D=4, t=3.0, max_scale=2.5),
]
TIMING = case(6, N=256, D=512, t=math.log(1 / 0.07), max_scale=100.0)


def inputs(c, dtype):
    d = getattr(torch, dtype)
    g = c.generator(salt=1)
    image = torch.randn(c.N, c.D, generator=g, dtype=torch.float64)
    text = image + 0.8 * torch.randn(c.N, c.D, generator=g, dtype=torch.float64)
    image = image * (0.5 + 2.5 * torch.rand(c.N, 1, generator=g, dtype=torch.float64))
    text = text * (0.5 + 2.5 * torch.rand(c.N, 1, generator=g, dtype=torch.float64))
    max_scale = None if c.max_scale == "None" else c.max_scale
    return image.to(d), text.to(d), torch.tensor(c.t, dtype=d), max_scale


# ----------------------------------------------------------------------------- named mistakes
# One the error model (checker/kit/errormodel.py) cannot say; every other slip of this kata it names by itself.


def _cap_on_the_log(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    """The cap applied to t, the log of the scale: exp(min(t, max_scale)). The reference caps exp(t); moving a call
    from a function's output to its input (clamp after exp -> clamp before exp) is no rewrite of the error model, whose
    rules change one call, one argument or one operand in place."""
    t_capped = logit_scale if max_scale is None else logit_scale.clamp(max=max_scale)
    image, text = F.normalize(image_embeds, dim=-1), F.normalize(text_embeds, dim=-1)
    logits = image @ text.T * t_capped.exp()
    labels = torch.arange(logits.shape[0])
    return (F.cross_entropy(logits, labels) + F.cross_entropy(logits.T, labels)) / 2, logits


MISTAKES = [
    Mistake("cap on the log of the scale", _cap_on_the_log,
            "your cap applies to logit_scale itself, t = min(t, max_scale), before the exp: the cap bounds the SCALE, "
            "exp(t) <= max_scale, so clamp after the exp, torch.exp(logit_scale).clamp(max=max_scale), or clamp t at "
            "log(max_scale), as open_clip clamps its parameter at math.log(100)"),
]


def _outputs(kit, c, args):
    try:
        return as_outputs(kit.user(args, case=c), OUTPUTS)
    except Fail:
        return None  # the shapes check reports it


# ----------------------------------------------------------------------------- checks


@check("structure", "clip_loss(image_embeds, text_embeds, logit_scale, max_scale) is a function")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["image_embeds", "text_embeds", "logit_scale", "max_scale"])


@check("numerics", "the default max_scale is 100, CLIP's cap")
def default_cap(kit):
    c = CASES[1]
    args = kit.inputs(c)[:3]
    got, want = _outputs(kit, c, args), kit.reference(args)
    if got is None:
        return
    try:
        compare(got[0], want[0], "loss", "()")
    except Fail as fail:
        explicit = _outputs(kit, c, args + (100.0,))
        if explicit is None or not matches(explicit[0], want[0]):
            raise Fail(t("{label}, called without max_scale: {fail}; with max_scale=100.0 passed explicitly it differs "
                         "too, so the default is not the cause", label=c.label, fail=fail.message)) from None
        raise Fail(t("{label}, called without max_scale: {fail}; the default is max_scale=100.0: exp(5) = 148 is "
                     "capped at 100", label=c.label, fail=fail.message)) from None


@check("properties", "the embeddings' norms change nothing: each row is normalised first")
def scale_free(kit):
    c = CASES[0]
    image, text, logit_scale, max_scale = kit.inputs(c)
    before = _outputs(kit, c, (image, text, logit_scale, max_scale))
    if before is None:
        return
    g = c.generator(salt=9)
    stretch = 0.2 + 5 * torch.rand(c.N, 1, generator=g, dtype=image.dtype)
    after = _outputs(kit, c, (image * stretch, text * stretch.flip(0), logit_scale, max_scale))
    if after is None:
        return
    for (name, _), b, a in zip(OUTPUTS, before, after):
        if not matches(a, b):
            raise Fail(t("{label}: multiplying each embedding by a positive number changed the {name}", label=c.label,
                         name=name),
                       kit.diagnose(c, "float64", before) or t(
                           "CLIP's logits are cosine similarities: normalise each embedding to unit length over D, "
                           "F.normalize(x, dim=-1), before the product"))


@check("properties", "the loss is symmetric: swapping the images and the texts leaves it unchanged")
def symmetric(kit):
    c = CASES[3]
    image, text, logit_scale, max_scale = kit.inputs(c)
    forward = _outputs(kit, c, (image, text, logit_scale, max_scale))
    swapped = _outputs(kit, c, (text, image, logit_scale, max_scale))
    if forward is None or swapped is None:
        return
    if not matches(swapped[0], forward[0]):
        raise Fail(t("{label}: clip_loss(texts, images) gives {swapped:.6g}, clip_loss(images, texts) {forward:.6g}",
                     label=c.label, swapped=swapped[0].item(), forward=forward[0].item()),
                   kit.diagnose(c, "float64", forward) or t(
                       "CLIP's loss is the MEAN of two cross-entropies, one over the rows of I Tᵀ (each image picks its "
                       "text) and one over its columns (each text picks its image): both directions, halved"))


@check("properties", "image and text embeddings of different shapes raise ValueError")
def mismatched(kit):
    image, text, logit_scale, max_scale = kit.inputs(CASES[0])
    expect_raises([("clip_loss(images (N, D), texts (N + 2, D))",
                    lambda: kit.user((image, torch.cat([text, text[:2]]), logit_scale, max_scale))),
                   ("clip_loss(images (N, D), texts (N, D - 1))",
                    lambda: kit.user((image, text[:, :-1], logit_scale, max_scale)))],
                  t("with fewer images than texts the (N_image, N_text) logits still give a loss, over pairs that do "
                    "not exist"))
