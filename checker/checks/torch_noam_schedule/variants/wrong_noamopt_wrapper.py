# expect: not a torch.optim.lr_scheduler.LRScheduler
"""The old Annotated Transformer's NoamOpt: a wrapper around the optimizer, not an LRScheduler."""


def noam_lr(step, d_model, warmup_steps, factor=1.0):
    if step < 1:
        raise ValueError("step must be >= 1")
    return factor * d_model ** -0.5 * min(step ** -0.5, step * warmup_steps ** -1.5)


class NoamOpt:
    def __init__(self, model_size, factor, warmup, optimizer):
        self.optimizer, self._step = optimizer, 0
        self.warmup, self.factor, self.model_size = warmup, factor, model_size

    def step(self):
        self._step += 1
        for p in self.optimizer.param_groups:
            p["lr"] = noam_lr(self._step, self.model_size, self.warmup, self.factor)
        self.optimizer.step()


def noam_scheduler(optimizer, d_model, warmup_steps, factor=1.0):
    return NoamOpt(d_model, factor, warmup_steps, optimizer)
