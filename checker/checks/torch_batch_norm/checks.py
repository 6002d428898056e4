"""Hidden checks: BatchNorm for (B, C) and (B, C, L) inputs, training and evaluation, as nn.BatchNorm1d.

The standard checks run evaluation mode with the loaded weights (shapes, float64 and float32, inputs
unchanged, gradients). The heart of the kata is the sequence below, run in the child
(checker/checks/torch_batch_norm/driver.py) on the user's module and here on the reference, which
checker/checks/torch_batch_norm/test_reference.py holds equal to nn.BatchNorm1d: three training steps on
different batches (outputs, gradients of the first, running_mean and running_var after each), then
evaluation on a fresh batch, from running statistics that start away from 0 and 1. The first
quantity that differs is reported, and named when it equals a known mistake's.
"""

from types import SimpleNamespace

import torch
from torch import nn

from checker.checks.torch_batch_norm.driver import batch_norm_run
from checker.kit import Fail, Mistake, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "BatchNorm"
OUTPUTS = [("output", "(B, C[, L])")]

# Every dimension its own size. Case 1 is (B, C) with the default eps and momentum (so wrong
# defaults show); cases 2 and 3 are (B, C, L), where the statistics run over B and L: n = B · L
# elements per channel. B = 6 makes the unbiased correction n / (n - 1) = 1.2, far from 1.
CASES = [
    case(1, B=6, C=4, eps="default", momentum="default"),
    case(2, B=3, C=5, L=7, eps=1e-3, momentum=0.3),
    case(3, B=2, C=3, L=9, eps=1e-4, momentum=0.05),
]
TIMING = case(4, B=64, C=128, L=32, eps=1e-5, momentum=0.1)
_STEPS = 3
_DEFAULTS = {"eps": 1e-5, "momentum": 0.1}  # nn.BatchNorm1d's


def init(c):
    kw = {"num_features": c.C}
    kw.update({k: getattr(c, k) for k in ("eps", "momentum") if getattr(c, k) != "default"})
    return kw


def _x(c, dtype="float64", salt=0):
    """Channels with their own offset and spread, so every per-channel statistic matters."""
    g = c.generator(salt)
    shape = [c.B, c.C] + ([c.L] if "L" in c.dims else [])
    view = [1, c.C] + ([1] if "L" in c.dims else [])
    shift = torch.linspace(-1.5, 2.0, c.C, dtype=torch.float64).view(view)
    spread = torch.linspace(0.5, 3.0, c.C, dtype=torch.float64).view(view)
    return (torch.randn(shape, generator=g, dtype=torch.float64) * spread + shift).to(getattr(torch, dtype))


def inputs(c, dtype):
    return (_x(c, dtype),)


# ----------------------------------------------------------------------------- named mistakes


def _variant(running_var="unbiased", norm_var="biased", momentum_on="batch", eval_stats="running",
             train_stats="batch", axes="batch", eps_at="inside", update="train", detach_stats=False,
             keep_graph=False, count="elements"):
    """BatchNorm with knobs; every knob at its default gives the right answer."""

    class Wrong(nn.Module):
        def __init__(self, num_features, eps=1e-5, momentum=0.1):
            super().__init__()
            self.eps, self.momentum = eps, momentum
            self.weight = nn.Parameter(torch.ones(num_features))
            self.bias = nn.Parameter(torch.zeros(num_features))
            self.register_buffer("running_mean", torch.zeros(num_features))
            self.register_buffer("running_var", torch.ones(num_features))

        def forward(self, x):
            dims = [0, 2] if x.dim() == 3 else [0]
            shape = [1, -1, 1] if x.dim() == 3 else [1, -1]
            n = x.numel() // x.shape[1] if count == "elements" else x.shape[0]
            mean, var = x.mean(dim=dims), x.var(dim=dims, unbiased=False)
            if update == "always" or (update == "train" and self.training):
                m = self.momentum
                target_var = var * n / (n - 1) if running_var == "unbiased" else var
                new_mean = (1 - m) * self.running_mean + m * mean if momentum_on == "batch" else \
                    m * self.running_mean + (1 - m) * mean
                new_var = (1 - m) * self.running_var + m * target_var if momentum_on == "batch" else \
                    m * self.running_var + (1 - m) * target_var
                if momentum_on == "none":  # no average at all: the last batch's statistics
                    new_mean, new_var = mean, target_var
                if keep_graph:
                    self.running_mean, self.running_var = new_mean, new_var
                else:
                    self.running_mean, self.running_var = new_mean.detach(), new_var.detach()
            use_batch = eval_stats == "batch" if not self.training else train_stats == "batch"
            if use_batch:
                if axes == "features":  # LayerNorm's axis: each sample over its channels
                    mean_b = x.mean(dim=1, keepdim=True)
                    var_b = x.var(dim=1, keepdim=True, unbiased=norm_var == "unbiased")
                elif axes == "batch only" and x.dim() == 3:  # per (channel, position): L not pooled
                    mean_b = x.mean(dim=0, keepdim=True)
                    var_b = x.var(dim=0, keepdim=True, unbiased=norm_var == "unbiased")
                else:
                    mean_b = mean.view(shape)
                    var_b = (x.var(dim=dims, unbiased=True) if norm_var == "unbiased" else var).view(shape)
                if detach_stats:
                    mean_b, var_b = mean_b.detach(), var_b.detach()
            else:
                mean_b, var_b = self.running_mean.view(shape), self.running_var.view(shape)
            if eps_at == "inside":
                x_hat = (x - mean_b) / torch.sqrt(var_b + self.eps)
            else:
                x_hat = (x - mean_b) / (torch.sqrt(var_b) + self.eps)
            return x_hat * self.weight.view(shape) + self.bias.view(shape)

    return Wrong


_LN_AXIS = ("your output normalises each sample over its channels (axis 1): that is LayerNorm's axis (层归一化). "
            "BatchNorm (批归一化) normalises each CHANNEL over the batch: mean and variance over axis 0 for (B, C), "
            "over axes 0 and 2 for (B, C, L)")
MISTAKES = [
    Mistake("running variance biased", _variant(running_var="biased"),
            "running_var is updated with the BIASED batch variance: torch's BatchNorm normalises with the biased "
            "variance (divide by n) but stores the UNBIASED one (divide by n - 1) in running_var: "
            "var * n / (n - 1), n = B (or B · L) elements per channel"),
    Mistake("normalised with the unbiased variance", _variant(norm_var="unbiased"),
            "your training output normalises with the UNBIASED variance (x.var() divides by n - 1 by default): "
            "normalise with the biased one, x.var(dim=..., unbiased=False); only running_var gets the unbiased one"),
    Mistake("n = B in the unbiased correction", _variant(count="batch"),
            "for a (B, C, L) input your running_var uses n / (n - 1) with n = B: each channel's variance is taken "
            "over B · L elements, so n = B · L (x.numel() // C) in the unbiased correction"),
    Mistake("momentum on the wrong side", _variant(momentum_on="running"),
            "your running statistics are momentum · running + (1 - momentum) · batch: in PyTorch momentum is the "
            "weight of the NEW batch, running = (1 - momentum) · running + momentum · batch (the opposite of the "
            "convention of an optimiser's momentum)"),
    Mistake("running statistics replaced", _variant(momentum_on="none"),
            "your running statistics are the last batch's own: they are a moving average, running = (1 - momentum) "
            "· running + momentum · batch, so evaluation uses an estimate over many batches"),
    Mistake("running statistics in training", _variant(train_stats="running"),
            "in training your output is normalised with the running statistics: training normalises with the "
            "current batch's mean and biased variance, and only updates the running ones"),
    Mistake("LayerNorm's axis", _variant(axes="features"), _LN_AXIS),
    Mistake("length not pooled", _variant(axes="batch only"),
            "for a (B, C, L) input your statistics are taken over the batch axis only, one per (channel, position): "
            "BatchNorm1d pools the batch AND the length, mean over dims (0, 2), one statistic per channel"),
    Mistake("running statistics never updated", _variant(update="never"),
            "running_mean and running_var never change in training: update them on every training forward, "
            "running = (1 - momentum) · running + momentum · batch statistic"),
    Mistake("running statistics updated in evaluation", _variant(update="always"),
            "running_mean and running_var change in evaluation too: update them only when self.training is True"),
    Mistake("batch statistics detached", _variant(detach_stats=True),
            "your gradients treat the batch mean and variance as constants (.detach(), .data, or computed under "
            "torch.no_grad()): they depend on x, and the gradient of BatchNorm flows through them; only the running "
            "statistics are updated without a graph"),
]
_KEEP_GRAPH = Mistake("running statistics keep the graph", _variant(keep_graph=True),
                      "running_mean or running_var requires grad after a training step: it was updated from the "
                      "batch statistics with their autograd graph, so the graph of every past step is kept alive (and "
                      "a second backward fails). Update under torch.no_grad(), or from mean.detach()")


def _namespace(impl):
    return SimpleNamespace(BatchNorm=impl)


def _state(kit, c):
    """The case's loaded weights, and running statistics away from 0 and 1 (as after some training)."""
    state = kit.state(c, "float64")
    g = c.generator(salt=29)
    state["running_mean"] = torch.randn(c.C, generator=g, dtype=torch.float64) * 0.5
    state["running_var"] = torch.rand(c.C, generator=g, dtype=torch.float64) + 0.5
    return state


def _sequence_args(kit, c):
    batches = [_x(c, salt=s) for s in range(_STEPS)]
    cot = torch.randn(batches[0].shape, generator=c.generator(salt=23), dtype=torch.float64)
    return init(c), _state(kit, c), batches, cot, _x(c, salt=_STEPS)


def _steps(c):
    """(key, what) in the order the sequence produces them."""
    out = []
    for s in range(_STEPS):
        out.append((f"y{s}", t("training step {step}: output", step=s + 1)))
        if s == 0:
            out += [("grad_x", t("training step 1: gradient of x")),
                    ("grad_weight", t("training step 1: gradient of weight")),
                    ("grad_bias", t("training step 1: gradient of bias"))]
        out += [(f"running_mean{s}", t("running_mean after training step {step}", step=s + 1)),
                (f"running_var{s}", t("running_var after training step {step}", step=s + 1))]
    return out + [("eval", t("evaluation output (running statistics)")),
                  ("running_mean_after_eval", t("running_mean after the evaluation forward")),
                  ("running_var_after_eval", t("running_var after the evaluation forward"))]


# ----------------------------------------------------------------------------- checks


@check("structure", "BatchNorm has parameters weight, bias (C,) and buffers running_mean, running_var (C,)")
def structure(kit):
    try:
        expect_structure(kit, TARGET, module=True, params=["num_features", "eps", "momentum"], forward=["x"],
                         init={"num_features": 6})
        buffers = kit.inspect(TARGET, {"num_features": 6}).get("buffers", {})
    except Fail:
        info = kit.inspect(TARGET)
        if not info.get("is_module"):
            raise
        buffers = kit.inspect(TARGET, {"num_features": 6}).get("buffers", {})  # the parameters' verdict, unless:
        if all(name in buffers for name in ("running_mean", "running_var")):
            raise
    for name in ("running_mean", "running_var"):
        if buffers.get(name) != [6]:
            raise Fail(t("BatchNorm(6) has no buffer {name} of shape (6,); it has {names}", name=name,
                         names=", ".join(f"{n} {tuple(s)}" for n, s in buffers.items()) or t("none")),
                       t("register the running statistics with self.register_buffer(\"{name}\", ...): a buffer is "
                         "saved in state_dict and moves with .to(), but is not a parameter (the optimiser must not "
                         "train it)", name=name))


@check("structure", "a fresh BatchNorm starts with weight 1, bias 0, running_mean 0, running_var 1")
def initial_values(kit):
    state = kit.user((), init={"num_features": 6}, method="state_dict")
    want = {"weight": 1.0, "bias": 0.0, "running_mean": 0.0, "running_var": 1.0}
    for name, value in want.items():
        got = state.get(name) if isinstance(state, dict) else None
        if not isinstance(got, torch.Tensor) or tuple(got.shape) != (6,) or not bool((got == value).all()):
            raise Fail(t("a fresh BatchNorm(6) has {name} = {got}; it should start at {value:g} everywhere, as "
                         "nn.BatchNorm1d's does", name=name, value=value,
                         got=[round(v, 3) for v in got.tolist()] if isinstance(got, torch.Tensor) else got))


def _compare_sequence(kit, keys):
    """Run the sequence on every case, user and reference; compare the quantities whose key passes keys."""
    for c in CASES:
        args = _sequence_args(kit, c)
        got = kit.drive(batch_norm_run, *args)
        want = batch_norm_run(_namespace(kit.solution.BatchNorm), *args)
        if keys("graph") and got.get("graph"):
            raise Fail(t("{label}: running_mean or running_var requires grad after a training step", label=c.label),
                       t(_KEEP_GRAPH.explain))
        for key, what in _steps(c):
            if not keys(key):
                continue
            try:
                compare(got.get(key), want[key], what, "(C,)" if key.startswith("running") or key.startswith("grad_")
                        and key != "grad_x" else "(B, C[, L])")
            except Fail as fail:
                named = kit.name_mistake((), got, run=lambda m, args=args: batch_norm_run(_namespace(m.impl), *args),
                                         same=lambda g, w, key=key: g.get(key) is not None and matches(g[key], w[key]))
                if named is None and init(c) != {**init(c), **_DEFAULTS}:  # the defaults in use: are they the cause?
                    given = kit.drive(batch_norm_run, {**init(c), **_DEFAULTS}, *args[1:])
                    if all(given.get(k) is not None and matches(given[k], want[k]) for k, _ in _steps(c)):
                        named = t("with eps=1e-5 and momentum=0.1 passed explicitly your BatchNorm is right: your "
                                  "defaults differ. nn.BatchNorm1d's are eps=1e-5, momentum=0.1 (Keras uses eps=1e-3 "
                                  "and momentum=0.99, where the momentum weighs the old running value, the other "
                                  "convention)")
                raise Fail(t("{label}: {fail}", label=c.label, fail=fail), named) from None


@check("numerics", "training mode over 3 steps: outputs match nn.BatchNorm1d's (batch mean, biased variance)")
def training_outputs(kit):
    _compare_sequence(kit, lambda key: key[0] == "y")


@check("gradients", "training mode: gradients of x, weight and bias flow through the batch statistics, as "
                    "nn.BatchNorm1d's")
def training_gradients(kit):
    _compare_sequence(kit, lambda key: key.startswith("grad_"))


@check("properties", "running statistics after each of 3 training steps match nn.BatchNorm1d's (momentum, unbiased "
                     "variance, no graph)")
def running_statistics(kit):
    _compare_sequence(kit, lambda key: key.startswith("running") and "eval" not in key or key == "graph")


@check("properties", "evaluation mode normalises with the running statistics and leaves them unchanged")
def evaluation(kit):
    _compare_sequence(kit, lambda key: "eval" in key)
