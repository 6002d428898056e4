"""Runs in the child: the user's noam_lr over many steps, and their noam_scheduler driven over steps.

Drivers never judge: they return what the user's code did, the parent compares (see Kit.drive).
"""

from collections import OrderedDict, defaultdict

import torch


class RecordingOptimizer(torch.optim.Optimizer):
    """A torch.optim.Optimizer over two parameter groups, as a training loop builds them (weights, and biases and
    norms without weight decay), whose step() records the lr in effect in each. A scheduler's lambda is called once
    per group and step: one that counts its own calls runs twice as fast here.

    Optimizer.__init__ is not called: it runs add_param_group, wrapped in torch._disable_dynamo,
    whose first call imports torch._dynamo (2-4 s, more than the whole check). The attributes it
    would set are set here; LRScheduler needs only param_groups and a step method.
    """

    def __init__(self, lr: float):
        self.defaults = {"lr": lr}
        self._optimizer_step_pre_hooks = OrderedDict()
        self._optimizer_step_post_hooks = OrderedDict()
        self._optimizer_state_dict_pre_hooks = OrderedDict()
        self._optimizer_state_dict_post_hooks = OrderedDict()
        self._optimizer_load_state_dict_pre_hooks = OrderedDict()
        self._optimizer_load_state_dict_post_hooks = OrderedDict()
        self.state = defaultdict(dict)
        self.param_groups = [{"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr, "weight_decay": 0.01},
                             {"params": [torch.nn.Parameter(torch.zeros(1))], "lr": lr, "weight_decay": 0.0}]
        self.lrs: list = []
        self.second: list = []  # the lr of the second group

    def step(self, closure=None):
        self.lrs.append(self.param_groups[0]["lr"])
        self.second.append(self.param_groups[1]["lr"])


def noam_values(user, steps, d_model, warmup_steps, factor):
    """[noam_lr(step, d_model, warmup_steps, factor) for step in steps], as the user's code returns them."""
    return [user.noam_lr(step, d_model, warmup_steps, factor) for step in steps]


def noam_schedule_run(user, d_model, warmup_steps, factor, steps, base_lr=1.0):
    """Build the user's scheduler on a RecordingOptimizer(lr=base_lr) and train for `steps` steps.

    Returns {"lrs": lr during each optimizer.step(), "kind": the scheduler's class name,
    "is_scheduler": whether it is a torch.optim.lr_scheduler.LRScheduler}.
    """
    optimizer = RecordingOptimizer(base_lr)
    scheduler = user.noam_scheduler(optimizer, d_model, warmup_steps, factor)
    is_scheduler = isinstance(scheduler, torch.optim.lr_scheduler.LRScheduler)
    for _ in range(steps):
        optimizer.step()  # the usual order: optimizer first, then the scheduler
        if is_scheduler:
            scheduler.step()
    return {"lrs": optimizer.lrs, "second": optimizer.second, "kind": type(scheduler).__name__,
            "is_scheduler": is_scheduler}
