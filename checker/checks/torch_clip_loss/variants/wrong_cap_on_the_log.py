# expect: before the exp
"""The cap applied to t, the LOG of the scale: t is never above 100, so exp(t) is never capped (open_clip clamps t at log(100), not at 100)."""
import torch
import torch.nn.functional as F


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_features = F.normalize(image_embeds, dim=-1)
    text_features = F.normalize(text_embeds, dim=-1)
    t = logit_scale if max_scale is None else logit_scale.clamp(max=max_scale)
    scale = t.exp()
    logits_per_image = scale * image_features @ text_features.T
    logits_per_text = scale * text_features @ image_features.T
    labels = torch.arange(logits_per_image.shape[0])
    loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
    return loss, logits_per_image
