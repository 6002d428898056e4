"""The CLIP paper's Figure 3 pseudocode, NumPy-like, in torch: l2_normalize, logits = I_e T_eᵀ · exp(t),
loss_i = cross_entropy_loss(logits, labels, axis=0), loss_t = ... axis=1, loss = (loss_i + loss_t) / 2, each
cross-entropy written out with a log-softmax over its axis. The cap is open_clip's, on t: t clamped at log(max_scale)
gives the same scale (and, like a clamp of the scale, no gradient once capped). The contract's ValueError for embeddings of different shapes is added."""
import math

import torch


def _cross_entropy(logits, labels, axis):
    log_probs = torch.log_softmax(logits, dim=axis)
    picked = log_probs[labels, labels]
    return -picked.mean()


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    I_e = image_embeds / torch.linalg.vector_norm(image_embeds, dim=1, keepdim=True)
    T_e = text_embeds / torch.linalg.vector_norm(text_embeds, dim=1, keepdim=True)
    t = logit_scale if max_scale is None else torch.clamp(logit_scale, max=math.log(max_scale))
    logits = I_e @ T_e.T * torch.exp(t)
    n = logits.shape[0]
    labels = torch.arange(n)
    loss_i = _cross_entropy(logits, labels, axis=0)
    loss_t = _cross_entropy(logits, labels, axis=1)
    return (loss_i + loss_t) / 2, logits
