"""CLIP's contrastive loss: symmetric InfoNCE with a learnable temperature, from scratch.

Shape legend:
    N  image-text pairs in the batch: image i and text i belong together
    D  embedding width (both towers project into the same D-dimensional space)

Implement the training loss of CLIP (Radford et al. 2021, "Learning Transferable Visual Models From
Natural Language Supervision", Figure 3), as open_clip's ClipLoss computes it on one process, with
the two steps the model does before it:

1. L2-normalise each embedding over D (F.normalize, eps 1e-12), so that I Tᵀ holds cosine
   similarities.
2. The temperature is learnt through its log: logit_scale is the parameter t, the scale is exp(t)
   (CLIP initialises t = log(1 / 0.07)). CLIP and open_clip keep the scale at most 100: here the
   scale is min(exp(t), max_scale), no cap when max_scale is None. A capped scale passes no gradient
   to t.
3. logits_per_image = scale · I Tᵀ (N, N), row i: image i against every text; logits_per_text is
   its transpose. The labels are 0 .. N - 1: the match of row i is column i.
4. loss = (cross_entropy(logits_per_image, labels) + cross_entropy(logits_per_text, labels)) / 2.

Arguments:
    image_embeds  (N, D) float: the image tower's embeddings, any norm (not normalised yet)
    text_embeds   (N, D) float: the text tower's embeddings, any norm. Shapes that differ raise
                  ValueError: with N_image < N_text the rectangular logits would still give a loss
    logit_scale   0-dim float tensor: t, the log of the scale (a learnable parameter)
    max_scale     float, default 100.0 (CLIP's cap), or None: no cap
returns (loss, logits_per_image): a 0-dim tensor and an (N, N) tensor, of the embeddings' dtype,
differentiable in both embeddings and in logit_scale.

Rules: do not modify the inputs (in particular, do not clamp logit_scale in place: open_clip clamps
its parameter after the optimizer step, outside the loss).
Off limits: open_clip, transformers.
"""

import torch
from torch import Tensor


def clip_loss(image_embeds: Tensor, text_embeds: Tensor, logit_scale: Tensor,
              max_scale: float | None = 100.0) -> tuple[Tensor, Tensor]:
    raise NotImplementedError("write clip_loss: normalise, scale = exp(t) capped, I Tᵀ, cross-entropy both ways")
