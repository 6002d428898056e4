"""Hidden checks: the copy task (the interview tutorial): make_copy_batch, train_step, and a short training run.

make_copy_batch is compared exactly (the tokens come from one documented torch.randint call with
the caller's generator). train_step is run once in the child (checker.checks.child.transformer.train_step_once) on
a batch with PAD, with an SGD optimizer and stale gradients planted beforehand; its loss and the weights afterwards
are compared with the reference doing the same. Then copy_task_training (same module) trains a
fresh small Transformer with both functions: the loss must fall and the checker's own greedy
decoding must copy held-out sequences.
"""

import types

import torch
import torch.nn.functional as F

from checker.checks.child import transformer as fixtures
from checker.checks.torch_copy_task.driver import train_step_order, train_step_twice
from checker.kit import Fail, FollowUp, Mistake, UserError, case, check, compare, expect_structure, matches, raised
from checker.lang import t

TARGET = "make_copy_batch"
OUTPUTS = [("src", "(B, T)"), ("tgt_inp", "(B, T_t)"), ("tgt_out", "(B, T_t)")]
GRADIENTS = False  # integer outputs

# Every dimension its own size. Case 3 swaps the ids of BOS and EOS: nothing may be hard-coded.
CASES = [
    case(1, B=3, T=5, T_t=6, V=9, pad_id=0, bos_id=1, eos_id=2),
    case(2, B=6, T=4, T_t=5, V=20, pad_id=0, bos_id=1, eos_id=2),
    case(3, B=4, T=7, T_t=8, V=5, pad_id=0, bos_id=2, eos_id=1),
]


def inputs(c, dtype):
    return c.B, c.T, c.V, c.generator(salt=1), c.pad_id, c.bos_id, c.eos_id


# ----------------------------------------------------------------------------- make_copy_batch mistakes


def batch_with(batch_size, seq_len, vocab_size, generator, pad_id=0, bos_id=1, eos_id=2, *, low=3, high=0,
               swap=False, shift=True, bos=True, hard_ids=False, end_with_bos=False):
    """make_copy_batch with knobs; every knob at its default gives the right answer."""
    bos_id, eos_id = (1, 2) if hard_ids else (bos_id, eos_id)
    tokens = torch.randint(low, vocab_size + high, (batch_size, seq_len), generator=generator)
    first = torch.full((batch_size, 1), bos_id, dtype=torch.long)
    last = torch.full((batch_size, 1), bos_id if end_with_bos else eos_id, dtype=torch.long)
    tgt_inp = torch.cat([first, tokens], 1) if bos else torch.cat([tokens, last], 1)
    tgt_out = torch.cat([tokens, last], 1) if shift else tgt_inp
    return (tokens, tgt_out, tgt_inp) if swap else (tokens, tgt_inp, tgt_out)


def _batch_variant(**knobs):
    return lambda *args: batch_with(*args, **knobs)


MISTAKES = [
    Mistake("tgt_inp and tgt_out swapped", _batch_variant(swap=True),
            "your tgt_inp and tgt_out are swapped: the decoder reads tgt_inp = BOS + tokens and must predict "
            "tgt_out = tokens + EOS"),
    Mistake("tokens from 0", _batch_variant(low=0),
            "your tokens are drawn from 0 .. V-1, which includes PAD, BOS and EOS: "
            "torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)"),
    Mistake("tokens from 1", _batch_variant(low=1),
            "your tokens are drawn from 1 .. V-1: ids 0, 1, 2 are special, draw from 3: "
            "torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator)"),
    Mistake("tokens up to V-2", _batch_variant(high=-1),
            "your tokens stop at V-2: torch.randint's upper bound is exclusive, so draw with "
            "torch.randint(3, vocab_size, ...)"),
]


# ----------------------------------------------------------------------------- train_step cases and mistakes

# One optimisation step on a batch with PAD; case 12 uses pad_id = 4 (a hard-coded ignore_index=0 shows); case 13
# is the contract's smallest batch, one sequence (a squeeze() that drops the batch axis shows).
_STEP_CASES = [
    case(11, B=4, T_s=5, T_t=6, V=10, D=8, H=2, pad_id=0),
    case(12, B=3, T_s=6, T_t=7, V=9, D=12, H=3, pad_id=4),
    case(13, B=1, T_s=4, T_t=6, V=8, D=8, H=2, pad_id=0),
]
_STEP_LR = 0.5


def step_model(c):
    """A seeded RecordingTransformer in float64 and eval mode (train_step must switch it to training)."""
    return fixtures.seeded_model(c.id, vocab=c.V, d_model=c.D, num_heads=c.H, d_ff=2 * c.D, num_layers=1,
                                 pad_id=c.pad_id)


def step_batch(c):
    """(src (B, T_s), tgt_inp (B, T_t), tgt_out (B, T_t)): rows of different lengths, PAD after them."""
    g = c.generator(salt=2)
    real = torch.tensor([t for t in range(c.V) if t not in (c.pad_id, 1, 2)])
    tokens = real[torch.randint(len(real), (c.B, c.T_s), generator=g)]
    lengths = [c.T_s] + [int(n) for n in torch.randint(2, c.T_s, (c.B - 1,), generator=g)]
    src = torch.full((c.B, c.T_s), c.pad_id)
    tgt_inp = torch.full((c.B, c.T_t), c.pad_id)
    tgt_out = torch.full((c.B, c.T_t), c.pad_id)
    for b, n in enumerate(lengths):
        src[b, :n] = tokens[b, :n]
        tgt_inp[b, 0], tgt_inp[b, 1:n + 1] = 1, tokens[b, :n]
        tgt_out[b, :n], tgt_out[b, n] = tokens[b, :n], 2
    return src, tgt_inp, tgt_out


def step_with(model, optimizer, src, tgt_inp, tgt_out, pad_id=0, *, ignore=True, zero_grad="before", step=True,
              target="tgt_out", decoder_input="tgt_inp", flatten="same", reduction="mean", train=True,
              fixed_ignore=None, smoothing=0.0):
    """train_step with knobs; every knob at its default gives the right answer."""
    if train:
        model.train()
    feed = {"tgt_inp": tgt_inp, "tgt_out": tgt_out}
    logits = model(src, feed[decoder_input])
    wanted = {"tgt_out": tgt_out, "tgt_inp": tgt_inp}[target]
    flat = wanted.reshape(-1) if flatten == "same" else wanted.t().reshape(-1)
    loss = F.cross_entropy(logits.reshape(-1, logits.size(-1)), flat, ignore_index=(pad_id if fixed_ignore is None else fixed_ignore) if ignore else -100,
                           reduction=reduction, label_smoothing=smoothing)
    if zero_grad == "before":
        optimizer.zero_grad()
    loss.backward()
    if zero_grad == "after":
        optimizer.zero_grad()
    if step:
        optimizer.step()
    return loss.item()


def _step_variant(**knobs):
    return types.SimpleNamespace(train_step=lambda *args: step_with(*args, **knobs))


_STEP_MISTAKES = [
    Mistake("PAD targets counted", _step_variant(ignore=False),
            "your loss counts the PAD targets too: F.cross_entropy(..., ignore_index=pad_id) (nn.CrossEntropyLoss("
            "ignore_index=pad_id)), so padded positions count for nothing"),
    Mistake("no zero_grad", _step_variant(zero_grad="never"),
            "your step used gradients accumulated from before (no optimizer.zero_grad()): clear them before "
            "loss.backward()"),
    Mistake("no update", _step_variant(step=False),
            "your weights did not change: call optimizer.step() after loss.backward(), and do not call "
            "optimizer.zero_grad() between backward() and step() (it throws the new gradients away)"),
    Mistake("targets are the decoder input", _step_variant(target="tgt_inp"),
            "your loss compares the logits with tgt_inp, so each position learns to repeat its own input: "
            "the targets are tgt_out (the same sequence shifted left by one)"),
    Mistake("decoder fed tgt_out", _step_variant(decoder_input="tgt_out"),
            "your decoder reads tgt_out, the answers it must predict: feed model(src, tgt_inp), compare with tgt_out"),
    Mistake("targets flattened in another order", _step_variant(flatten="transposed"),
            "your targets are flattened in a different order from the logits: logits.reshape(-1, V) goes row by "
            "row (batch, then position), so flatten tgt_out the same way, tgt_out.reshape(-1)"),
    Mistake("ignore_index fixed at 0", _step_variant(fixed_ignore=0),
            "your loss ignores target 0 whatever pad_id says: pass ignore_index=pad_id to the cross-entropy"),
    Mistake("label smoothing", _step_variant(smoothing=0.1),
            "your loss uses label smoothing 0.1 (the paper's training setting): this train_step's loss is plain "
            "cross-entropy over the non-PAD targets"),
    Mistake("loss summed", _step_variant(reduction="sum"),
            "your loss is the sum over the targets: average it over the non-PAD targets (the default reduction='mean')"),
]

_TRAINING = {"seed": 1, "vocab": 8, "seq_len": 4, "batch": 32, "d_model": 32, "num_heads": 4, "d_ff": 64,
            "num_layers": 1, "lr": 1e-2, "steps": 60, "held_out": 64}
# The reference ends this run near loss 0.1 with ~97% of held-out tokens copied (see the statement);
# the thresholds leave room for a correct implementation that rounds differently.
_MAX_FINAL_LOSS, _MIN_TOKEN_ACCURACY = 0.5, 0.8


# ----------------------------------------------------------------------------- checks


@check("structure", "make_copy_batch and train_step are functions with the documented parameters")
def structure(kit):
    expect_structure(kit, "make_copy_batch", module=False,
                     params=["batch_size", "seq_len", "vocab_size", "generator", "pad_id", "bos_id", "eos_id"])
    expect_structure(kit, "train_step", module=False,
                     params=["model", "optimizer", "src", "tgt_inp", "tgt_out", "pad_id"])


@check("properties", "make_copy_batch: tgt_inp is BOS + src, tgt_out is src + EOS, tokens in 3 .. V-1")
def batch_layout(kit):
    for c in CASES:
        value = kit.user(kit.inputs(c))
        if not (isinstance(value, (tuple, list)) and len(value) == 3 and all(isinstance(v, torch.Tensor) for v in value)):
            raise Fail(t("{label}: make_copy_batch should return a tuple (src, tgt_inp, tgt_out) of tensors",
                         label=c.label))
        src, tgt_inp, tgt_out = value
        if src.shape == (c.B, c.T + 1) and (src[:, -1] == c.eos_id).all():
            raise Fail(t("{label}: src should have shape (B, T) = {want}, got {got}, ending with EOS (eos_id = "
                         "{eos_id})", label=c.label, want=(c.B, c.T), got=tuple(src.shape), eos_id=c.eos_id),
                       t("your src ends with EOS too: the source is the tokens alone, (B, T); only tgt_out ends with "
                         "EOS"))
        if src.shape != (c.B, c.T) or tgt_inp.shape != (c.B, c.T_t) or tgt_out.shape != (c.B, c.T_t):
            continue  # the shapes check says what is wrong
        if src.min() < 3 or src.max() >= c.V:
            raise Fail(t("{label}: src holds ids from {low} to {high}; the tokens to copy are 3 .. vocab_size-1 = "
                         "{last} (ids 0, 1, 2 are PAD, BOS, EOS)", label=c.label, low=int(src.min()),
                         high=int(src.max()), last=c.V - 1))
        if (tgt_inp[:, 0] != c.bos_id).any() or not torch.equal(tgt_inp[:, 1:], src):
            raise Fail(t("{label}: tgt_inp[0] = {tgt} for src[0] = {src}: tgt_inp should be BOS (bos_id = {bos_id}) "
                         "followed by the tokens of src", label=c.label, tgt=tgt_inp[0].tolist(), src=src[0].tolist(),
                         bos_id=c.bos_id))
        if (tgt_out[:, -1] != c.eos_id).any() or not torch.equal(tgt_out[:, :-1], src):
            raise Fail(t("{label}: tgt_out[0] = {tgt} for src[0] = {src}: tgt_out should be the tokens of src followed "
                         "by EOS (eos_id = {eos_id})", label=c.label, tgt=tgt_out[0].tolist(), src=src[0].tolist(),
                         eos_id=c.eos_id))


@check("properties", "make_copy_batch draws with the generator it is given: the same seed gives the same batch")
def uses_generator(kit):
    c = CASES[0]
    first, second = (kit.user(kit.inputs(c)) for _ in range(2))
    if not (isinstance(first, (tuple, list)) and isinstance(second, (tuple, list))):
        raise Fail(t("{label}: make_copy_batch should return a tuple (src, tgt_inp, tgt_out) of tensors",
                     label=c.label))
    if not all(isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor) and a.shape == b.shape and torch.equal(a, b)
               for a, b in zip(first, second)):
        raise Fail(t("{label}: two calls with generators seeded alike gave different batches", label=c.label),
                   t("your code draws from the global random state: draw the tokens with "
                     "torch.randint(3, vocab_size, (batch_size, seq_len), generator=generator), not with the global "
                     "RNG"))


def _step(kit, c, module=None):
    """train_step_once on the case: in the child with the user's code, or here with module's train_step."""
    args = (step_batch(c), c.pad_id, _STEP_LR, 100 + c.id)
    if module is not None:
        return fixtures.train_step_once(module, step_model(c), *args)
    try:
        return kit.drive(fixtures.train_step_once, step_model(c), *args)
    except UserError as err:
        order = _order_mistake(kit, c)
        if order is None:
            raise
        raise raised(c.label, err, order) from None


_STEP_FIRST = ("your train_step calls optimizer.step() before loss.backward(), so the update cannot use this batch's "
               "gradients (and a step that changes the weights in place breaks the backward pass that still needs "
               "them): call optimizer.zero_grad(), loss.backward(), then optimizer.step()")


def _order_mistake(kit, c) -> str | None:
    """The diagnosis of optimizer.step() called before the backward pass, when the user's train_step does that."""
    events = kit.drive(train_step_order, step_model(c), step_batch(c), c.pad_id, _STEP_LR)
    step_first = "step" in events and "backward" in events and events.index("step") < events.index("backward")
    return t(_STEP_FIRST) if step_first else None


def _loss(value) -> torch.Tensor:
    return torch.tensor(value, dtype=torch.float64)  # float64: a Python float's own precision


def _same_step(got, want) -> bool:
    return (isinstance(got["loss"], float) and matches(_loss(got["loss"]), _loss(want["loss"]))
            and all(matches(got["params"][n], p) for n, p in want["params"].items()))


def _diagnose_step(kit, c, got) -> str | None:
    return (kit.name_mistake((), got, _STEP_MISTAKES, run=lambda m: _step(kit, c, m.impl), same=_same_step)
            or _order_mistake(kit, c))


@check("numerics", "train_step returns the batch's loss as a float: cross-entropy averaged over non-PAD targets")
def step_loss(kit):
    for c in _STEP_CASES:
        got, want = _step(kit, c), _step(kit, c, kit.solution)
        loss = got["loss"]
        if isinstance(loss, torch.Tensor):
            raise Fail(t("{label}: train_step returned a tensor", label=c.label),
                       t("a tensor loss keeps its graph alive and cannot be logged as a number: return the loss as a "
                         "Python float (loss.item())"))
        if not isinstance(loss, float):
            raise Fail(t("{label}: train_step should return the loss as a Python float (loss.item()), got {kind}",
                         label=c.label, kind=type(loss).__name__))
        try:
            compare(_loss(loss), _loss(want["loss"]), "loss")
        except Fail as fail:
            raise Fail(t("{label}, a batch with PAD (pad_id = {pad_id}): {fail}", label=c.label, pad_id=c.pad_id,
                         fail=fail), _diagnose_step(kit, c, got)) from None


def _zero_grad_after() -> str:
    return t("Follow-up: your train_step clears the gradients after optimizer.step() (the Annotated Transformer's "
             "order: backward, step, zero_grad), so its update used whatever .grad held when it was called: the "
             "gradients planted before the call moved the weights too. From a fresh model it is equivalent (two calls "
             "from empty gradients match the reference), but what if .grad is not empty when training starts, after "
             "a gradient check, a backward() for a probe or an interrupted step? Clearing them before loss.backward() "
             "makes every call self-contained, which this kata's reference does")


@check("numerics", "train_step updates every weight once, from fresh gradients (zero_grad, backward, step)")
def step_update(kit):
    cleared_after = False
    for c in _STEP_CASES:
        got, want = _step(kit, c), _step(kit, c, kit.solution)
        try:
            for name, p in want["params"].items():
                if name not in got["params"]:
                    raise Fail(t("the model lost its parameter {name}", name=name))
                compare(got["params"][name], p, t("{name} after the step", name=name))
        except Fail as fail:
            if _zeroes_after_step(kit, c, got):
                cleared_after = True
                continue
            raise Fail(t("{label}, SGD(lr={lr}) with stale gradients left in .grad: {fail}", label=c.label,
                         lr=_STEP_LR, fail=fail), _diagnose_step(kit, c, got)) from None
    if cleared_after:
        raise FollowUp(_zero_grad_after())


def _zeroes_after_step(kit, c, got) -> bool:
    """The step used the stale gradients (as with no zero_grad at all), yet two calls in a row from empty
    gradients match the reference's: the gradients are cleared, after optimizer.step()."""
    no_zero_grad = next(m for m in _STEP_MISTAKES if m.name == "no zero_grad")  # what this one call equals
    if not _same_step(got, _step(kit, c, no_zero_grad.impl)):
        return False
    args = (step_model(c), step_batch(c), c.pad_id, _STEP_LR)
    mine, theirs = kit.drive(train_step_twice, *args), train_step_twice(kit.solution, *args)
    return (all(isinstance(v, float) and matches(_loss(v), _loss(w)) for v, w in zip(mine["losses"], theirs["losses"]))
            and all(n in mine["params"] and matches(mine["params"][n], p) for n, p in theirs["params"].items()))


@check("properties", "train_step puts the model in training mode before the forward pass")
def step_train_mode(kit):
    c = _STEP_CASES[0]
    calls = _step(kit, c)["calls"]  # the model arrives in eval mode
    if not calls:
        raise Fail(t("{label}: train_step never called the model: logits = model(src, tgt_inp)", label=c.label))
    if any(not training for _, training, _ in calls):
        raise Fail(t("{label}: the model arrived in eval mode and ran its forward pass still in eval mode",
                     label=c.label),
                   t("train_step trusts the mode the model arrives in: call model.train() at the start of train_step "
                     "(dropout must act while training)"))


@check("properties", "training with both functions: the loss falls and greedy decoding copies held-out sequences")
def training_run(kit):
    cfg = _TRAINING
    reply = kit.drive(fixtures.copy_task_training, cfg)
    losses, src, pred = reply["losses"], reply["src"], reply["pred"]
    first, final = sum(losses[:3]) / 3, sum(losses[-5:]) / 5
    T = cfg["seq_len"]
    copied = (pred[:, 1:T + 1] == src).float().mean().item() if pred.size(1) >= T + 1 else 0.0
    setup = t("{steps} steps of Adam(lr={lr}), batches of {batch} from your make_copy_batch (seq_len={T}, "
              "vocab_size={vocab}), a 1-layer Transformer (d_model={d_model})", steps=cfg["steps"], lr=cfg["lr"],
              batch=cfg["batch"], T=T, vocab=cfg["vocab"], d_model=cfg["d_model"])
    if not final < min(_MAX_FINAL_LOSS, first / 3):
        raise Fail(t("{setup}: the loss went from {first:.3f} (first 3 steps) to {final:.3f} (last 5); the reference "
                     "ends below 0.2. Check that train_step calls optimizer.step() and zero_grad(), and that the "
                     "targets are tgt_out", setup=setup, first=first, final=final))
    if copied < _MIN_TOKEN_ACCURACY:
        raise Fail(t("{setup}: the loss fell to {final:.3f}, but greedy decoding copies only {copied:.0%} of the "
                     "held-out tokens (the reference ~97%); e.g. src {src} gave {pred}. Check the teacher forcing: "
                     "model(src, tgt_inp) compared with tgt_out", setup=setup, final=final, copied=copied,
                     src=src[0].tolist(), pred=pred[0].tolist()))
