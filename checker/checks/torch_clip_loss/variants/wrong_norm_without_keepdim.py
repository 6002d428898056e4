# expect: keepdim
"""The norm taken without keepdim: (N, D) / (N,) lines the N norms up with the D features."""
import torch
import torch.nn.functional as F


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_features = image_embeds / image_embeds.norm(dim=-1)
    text_features = text_embeds / text_embeds.norm(dim=-1)
    scale = logit_scale.exp()
    if max_scale is not None:
        scale = scale.clamp(max=max_scale)
    logits_per_image = scale * image_features @ text_features.T
    logits_per_text = scale * text_features @ image_features.T
    labels = torch.arange(logits_per_image.shape[0])
    loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2
    return loss, logits_per_image
