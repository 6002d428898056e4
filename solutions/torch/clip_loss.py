"""CLIP's contrastive loss: symmetric InfoNCE with a learnable temperature (reference answer).

Shape legend:
    N  image-text pairs in the batch (pair i: image i and text i)
    D  embedding width (the shared space of both towers)

As open_clip's ClipLoss on a single process, with the model's own steps before it: both embeddings L2-normalised,
the logit scale exp(t) of a learnable t (open_clip clamps t at log 100), logits = scale · I Tᵀ, and the mean of the
cross-entropies of the rows (each image picks its text) and of the columns (each text picks its image).
"""

import math

import torch
import torch.nn.functional as F
from torch import Tensor


def unit(x: Tensor) -> Tensor:
    """Each row scaled to length 1: (N, D) -> (N, D)."""
    return x / x.norm(dim=-1, keepdim=True)  # (N, D) / (N, 1)


def clip_loss(image_embeds: Tensor, text_embeds: Tensor, logit_scale: Tensor,
              max_scale: float | None = 100.0) -> tuple[Tensor, Tensor]:
    """(loss, logits_per_image): (), (N, N)."""
    if image_embeds.shape != text_embeds.shape:
        raise ValueError(f"image_embeds {image_embeds.shape} and text_embeds {text_embeds.shape} must both be (N, D)")
    # 1) unit vectors: the logits become cosine similarities
    image = unit(image_embeds)  # (N, D)
    text = unit(text_embeds)  # (N, D)
    # 2) the temperature: the scale exp(t) of the log-parameterised t, at most max_scale
    cap = math.inf if max_scale is None else max_scale
    scale = torch.exp(logit_scale).clamp(max=cap)  # ()
    # 3) every image against every text; the matching pairs sit on the diagonal
    logits_per_image = image @ text.T * scale  # (N, D) @ (D, N) -> (N, N)
    logits_per_text = logits_per_image.T  # (N, N): row j is text j against every image
    labels = torch.arange(len(logits_per_image), device=logits_per_image.device)  # (N,) row i matches column i
    # 4) cross-entropy both ways, averaged
    loss = (F.cross_entropy(logits_per_image, labels) + F.cross_entropy(logits_per_text, labels)) / 2  # ()
    return loss, logits_per_image
