# expect: logit_scale
"""The scale taken out with .item() (as for logging): a number, so the temperature is never learnt."""
import torch
import torch.nn.functional as F


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_features = F.normalize(image_embeds, dim=-1)
    text_features = F.normalize(text_embeds, dim=-1)
    scale = logit_scale.exp().item()
    if max_scale is not None:
        scale = min(scale, max_scale)
    logits_per_image = scale * image_features @ text_features.T
    logits_per_text = scale * text_features @ image_features.T
    labels = torch.arange(logits_per_image.shape[0])
    loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
    return loss, logits_per_image
