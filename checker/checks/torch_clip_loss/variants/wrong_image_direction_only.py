# expect: logits_per_text
"""Only the images pick their texts: the cross-entropy over the columns (each text picks its image) is missing."""
import torch
import torch.nn.functional as F


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_features = F.normalize(image_embeds, dim=-1)
    text_features = F.normalize(text_embeds, dim=-1)
    scale = logit_scale.exp()
    if max_scale is not None:
        scale = scale.clamp(max=max_scale)
    logits_per_image = scale * image_features @ text_features.T
    logits_per_text = scale * text_features @ image_features.T
    labels = torch.arange(logits_per_image.shape[0])
    return F.cross_entropy(logits_per_image, labels), logits_per_image
