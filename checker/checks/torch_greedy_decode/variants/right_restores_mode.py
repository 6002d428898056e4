"""Puts the model in eval mode for decoding and hands it back in the mode it came in; inference_mode instead
of no_grad (ids need no autograd either way)."""
import torch


def greedy_decode(model, src, bos_id, eos_id, max_new_tokens):
    was_training = model.training
    model.eval()
    try:
        with torch.inference_mode():
            memory = model.encode(src)
            ys = src.new_full((src.size(0), 1), bos_id)
            done = torch.zeros(src.size(0), dtype=torch.bool, device=src.device)
            for _ in range(max_new_tokens):
                step = model.out_proj(model.decode(ys, memory, src)[:, -1]).argmax(-1)
                step = torch.where(done, torch.full_like(step, model.pad_id), step)
                ys = torch.cat([ys, step[:, None]], dim=1)
                done = done | (step == eos_id)
                if bool(done.all()):
                    break
        return ys.clone()
    finally:
        model.train(was_training)
