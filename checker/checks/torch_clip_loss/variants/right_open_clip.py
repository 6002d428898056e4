"""open_clip's ClipLoss (mlfoundations/open_clip, src/open_clip/loss.py) on one process, as written: get_logits,
get_ground_truth and the mean of the two cross-entropies. Adapted minimally: the model's own steps before it, as
open_clip's CLIP.encode_image/encode_text (F.normalize(x, dim=-1)) and forward (self.logit_scale.exp()), with the cap
applied to the scale (open_clip clamps its parameter at log 100 after each optimizer step). The contract's ValueError for embeddings of different shapes is added."""
import torch
import torch.nn.functional as F


class ClipLoss(torch.nn.Module):
    def __init__(self, local_loss=False, gather_with_grad=False, cache_labels=False, rank=0, world_size=1):
        super().__init__()
        self.world_size = world_size
        self.cache_labels = cache_labels
        self.prev_num_logits = 0
        self.labels = {}

    def get_ground_truth(self, device, num_logits) -> torch.Tensor:
        if self.prev_num_logits != num_logits or device not in self.labels:
            labels = torch.arange(num_logits, device=device, dtype=torch.long)
            if self.cache_labels:
                self.labels[device] = labels
                self.prev_num_logits = num_logits
        else:
            labels = self.labels[device]
        return labels

    def get_logits(self, image_features, text_features, logit_scale):
        logits_per_image = logit_scale * image_features @ text_features.T
        logits_per_text = logit_scale * text_features @ image_features.T
        return logits_per_image, logits_per_text

    def forward(self, image_features, text_features, logit_scale, output_dict=False):
        device = image_features.device
        logits_per_image, logits_per_text = self.get_logits(image_features, text_features, logit_scale)
        labels = self.get_ground_truth(device, logits_per_image.shape[0])
        total_loss = (
            F.cross_entropy(logits_per_image, labels) +
            F.cross_entropy(logits_per_text, labels)
        ) / 2
        return ({"contrastive_loss": total_loss} if output_dict else total_loss), logits_per_image


def clip_loss(image_embeds, text_embeds, logit_scale, max_scale=100.0):
    if image_embeds.shape != text_embeds.shape:
        raise ValueError("image_embeds and text_embeds must both be (N, D)")
    image_features = F.normalize(image_embeds, dim=-1)
    text_features = F.normalize(text_embeds, dim=-1)
    scale = logit_scale.exp()
    if max_scale is not None:
        scale = scale.clamp(max=max_scale)
    return ClipLoss()(image_features, text_features, scale)
