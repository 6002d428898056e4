"""OpenAI's CLIP (openai/CLIP, clip/model.py), CLIP.forward as written: features / features.norm(dim=1, keepdim=True),
logit_scale = self.logit_scale.exp(), logits_per_image = logit_scale * image_features @ text_features.t(),
logits_per_text = logits_per_image.t(). Adapted minimally: the cap (its training clamps the scale at 100) and the
loss of the paper, the mean of the two cross-entropies, with torch.diag for the matching pairs. The contract's ValueError for embeddings of different shapes is added."""
import torch


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_features = image_embeds / image_embeds.norm(dim=1, keepdim=True)
    text_features = text_embeds / text_embeds.norm(dim=1, keepdim=True)
    logit_scale = logit_scale.exp()
    if max_scale is not None:
        logit_scale = torch.minimum(logit_scale, torch.tensor(max_scale, dtype=logit_scale.dtype))
    logits_per_image = logit_scale * image_features @ text_features.t()
    logits_per_text = logits_per_image.t()
    loss_image = (torch.logsumexp(logits_per_image, dim=1) - torch.diag(logits_per_image)).mean()
    loss_text = (torch.logsumexp(logits_per_text, dim=1) - torch.diag(logits_per_text)).mean()
    return (loss_image + loss_text) / 2, logits_per_image
