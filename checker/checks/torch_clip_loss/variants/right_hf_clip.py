"""Hugging Face's CLIPModel (transformers, models/clip/modeling_clip.py): forward's normalisation
(x / x.norm(p=2, dim=-1, keepdim=True)), logits_per_text = text_embeds @ image_embeds.t() * logit_scale, and
clip_loss/contrastive_loss as written. Adapted minimally: the cap on the scale (Hugging Face's CLIP has none; the
original training clamps at 100). The contract's ValueError for embeddings of different shapes is added."""
import torch
from torch import nn


def contrastive_loss(logits: torch.Tensor) -> torch.Tensor:
    return nn.functional.cross_entropy(logits, torch.arange(len(logits), device=logits.device))


def hf_clip_loss(similarity: torch.Tensor) -> torch.Tensor:
    caption_loss = contrastive_loss(similarity)
    image_loss = contrastive_loss(similarity.t())
    return (caption_loss + image_loss) / 2.0


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_embeds = image_embeds / image_embeds.norm(p=2, dim=-1, keepdim=True)
    text_embeds = text_embeds / text_embeds.norm(p=2, dim=-1, keepdim=True)
    logit_scale = logit_scale.exp()
    if max_scale is not None:
        logit_scale = torch.clamp(logit_scale, max=max_scale)
    logits_per_text = torch.matmul(text_embeds, image_embeds.t().to(text_embeds.device)) * logit_scale.to(
        text_embeds.device)
    logits_per_image = logits_per_text.t()
    loss = hf_clip_loss(logits_per_text)
    return loss, logits_per_image
