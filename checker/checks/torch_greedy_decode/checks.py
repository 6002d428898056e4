"""Hidden checks: greedy decoding (the interview tutorial's greedy_decode, with early stop and PAD after EOS).

The model handed to the user's code is checker.checks.child.transformer.copy_machine(): a real
Transformer whose weights are set by hand so that greedy decoding copies the source. A source
row holding EOS at index L therefore ends at step L + 1, a row without EOS never ends, so each
case fixes exactly when every sequence finishes. Its logits keep a gap of ~1.4 between the best
and the second-best token (~0.87 in case 2): far above float32 rounding, small enough that sampling would stray.
"""

import torch

from checker.checks.child import transformer as fixtures
from checker.kit import Fail, Mistake, case, check, compare, expect_structure
from checker.lang import t

TARGET = "greedy_decode"
OUTPUTS = [("ids", "(B, T_out)")]
GRADIENTS = False  # the output is integer ids
DEVICE = "followup"  # ys and finished are made inside; the statement sets no device rule: a question, not a fail

# eos_at: per row, the source index of EOS (the row ends at step eos_at + 1), or None: no EOS.
# after_eos: what the source holds after EOS: PAD, or more tokens (then a finished row would go
# on with those tokens, not with EOS again: the interview tutorial's stop rule then never fires early).
# Every dimension its own size, T_out included (1 + the step at which the last row ends).
CASES = [
    case(1, B=3, T_s=6, max_new=7, T_out=6, pad_id=0, bos_id=1, eos_id=2, eos_at=(4, 2, 3), after_eos="tokens"),
    case(2, B=4, T_s=7, max_new=5, T_out=6, pad_id=0, bos_id=1, eos_id=2, eos_at=(None, 2, None, 3), after_eos="PAD",
         logit_scale=0.6),
    case(3, B=2, T_s=5, max_new=9, T_out=4, pad_id=4, bos_id=0, eos_id=7, eos_at=(2, 1), after_eos="PAD"),
    # the contract's own edge: EOS may be id 0 (`if eos_id and ...` skips it)
    case(5, B=2, T_s=6, max_new=6, T_out=7, pad_id=3, bos_id=1, eos_id=0, eos_at=(2, None), after_eos="PAD"),
    # the contract's smallest batch: one source (a squeeze() that drops the batch axis shows)
    case(6, B=1, T_s=5, max_new=6, T_out=5, pad_id=0, bos_id=1, eos_id=2, eos_at=(3,), after_eos="PAD"),
]
# logit_scale: the copy machine's logits times this (the best one 1.44 by default, 0.87 in case 2), so that a
# number read off the logits' VALUES (the max logit used as a token) differs from case to case; case 2 runs all
# max_new steps, so a wrong token there still gives ids of the right shape, to be compared value by value.
TIMING = case(4, B=16, T_s=12, max_new=12, T_out=13, pad_id=0, bos_id=1, eos_id=2, eos_at=(None,) * 16, after_eos="PAD")


def make_src(c) -> torch.Tensor:
    """(B, T_s) ids: content tokens, EOS at eos_at (then PAD or tokens), two different tokens first."""
    content = [t for t in range(9) if t not in (c.pad_id, c.bos_id, c.eos_id)]
    g = c.generator(salt=1)
    src = torch.tensor(content)[torch.randint(len(content), (c.B, c.T_s), generator=g)]
    for b, at in enumerate(c.eos_at):
        if src[b, 0] == src[b, 1]:  # so "the argmax at position 0" repeats a token the copy does not
            src[b, 1] = content[(content.index(int(src[b, 0])) + 1) % len(content)]
        if at is not None:
            src[b, at] = c.eos_id
            if c.after_eos == "PAD":
                src[b, at + 1:] = c.pad_id
    return src


def make_model(c, dtype="float64", dropout=0.0):
    spread = 0.25 * getattr(c, "logit_scale", 1.0)  # copy_machine's default spread, 0.25, scaled
    return fixtures.copy_machine(pad_id=c.pad_id, bos_id=c.bos_id, dropout=dropout, spread=spread).to(
        getattr(torch, dtype))


def inputs(c, dtype):
    return make_model(c, dtype), make_src(c), c.bos_id, c.eos_id, c.max_new


# ----------------------------------------------------------------------------- named mistakes


@torch.no_grad()
def decode_with(model, src, bos_id, eos_id, max_new_tokens, *, position=-1, keep_bos=True, early_stop=True,
                pad_after=True, fill=None, stop_rule="all finished", steps=0, append_last=True, eos_padded=False,
                pick="argmax"):
    """Greedy decoding with knobs; every knob at its default gives the right answer."""
    model.eval()
    memory = model.encode(src)
    ys = torch.full((src.size(0), 1), bos_id, dtype=torch.long)
    finished = torch.zeros(src.size(0), dtype=torch.bool)
    for _ in range(max_new_tokens + steps):
        logits = model.out_proj(model.decode(ys, memory, src)[:, position])
        # the bug with pick="max value": the largest logit itself, cast to an id, instead of its position
        next_id = logits.argmax(-1) if pick == "argmax" else logits.max(-1).values.long()
        if eos_padded:  # finished updated first, so the EOS itself is replaced by PAD
            finished = finished | (next_id == eos_id)
        if pad_after:
            next_id = next_id.masked_fill(finished, {"eos": eos_id, "zero": 0}.get(fill, model.pad_id))
        done = finished | (next_id == eos_id)
        if not append_last and done.all():
            break
        ys = torch.cat([ys, next_id[:, None]], dim=1)
        finished = done
        stop = {"same step": lambda: (next_id == eos_id).all(), "any": lambda: finished.any(),
                "all finished": lambda: finished.all()}[stop_rule]()
        if early_stop and stop:
            break
    return ys if keep_bos else ys[:, 1:]


def _variant(**knobs):
    return lambda model, src, bos_id, eos_id, max_new_tokens: decode_with(
        model, src, bos_id, eos_id, max_new_tokens, **knobs)


MISTAKES = [
    Mistake("BOS missing", _variant(keep_bos=False),
            "your ids equal the right ones without the BOS column: return the whole prefix, starting with BOS"),
    Mistake("EOS repeated after EOS", _variant(fill="eos"),
            "after EOS your sequences repeat EOS: a finished sequence receives model.pad_id, not eos_id"),
    Mistake("PAD hard-coded as 0", _variant(fill="zero"),
            "after EOS your sequences hold 0, but this model's PAD id is another: use model.pad_id, not a hard-coded 0"),
    Mistake("the interview tutorial's stop rule", _variant(pad_after=False, stop_rule="same step"),
            "you stop only when every sequence produces EOS at the same step (the interview tutorial's `if (next_token == eos_id)"
            ".all()`), and tokens after EOS are not replaced: remember which sequences are finished "
            "(finished |= next_id == eos_id), give them model.pad_id, stop when finished.all()"),
    Mistake("last EOS not appended", _variant(append_last=False),
            "your loop stops before appending the step that finishes the last sequence, so its EOS is missing: "
            "append the token first, then check whether every sequence is finished"),
    Mistake("EOS replaced by PAD", _variant(eos_padded=True),
            "your EOS tokens come out as PAD: you mark a sequence finished before filling, so its own EOS is "
            "replaced; fill the already-finished sequences first, then append, then update finished"),
    Mistake("stops at the first EOS", _variant(stop_rule="any"),
            "your loop stops as soon as ANY sequence produces EOS: the others are cut short; stop when every "
            "sequence is finished, finished.all()"),
    Mistake("max values as ids", _variant(pick="max value"),
            "your next tokens are the largest logit VALUES cast to ids, not the positions of the largest logits: "
            "torch.max(logits, dim=-1) returns (values, indices); take the indices (torch.max(...)[1], .indices) or "
            "logits.argmax(-1)"),
]

# ----------------------------------------------------------------------------- checks


@check("structure", "greedy_decode is a function taking (model, src, bos_id, eos_id, max_new_tokens)")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["model", "src", "bos_id", "eos_id", "max_new_tokens"])


@check("properties", "after its EOS a sequence holds only pad_id")
def pad_after_eos(kit):
    for c in CASES:
        ids = _ids(kit.user(kit.inputs(c)), c)
        for b in range(c.B):
            row = ids[b, 1:].tolist()
            if c.eos_id in row:
                after = row[row.index(c.eos_id) + 1:]
                if any(tok != c.pad_id for tok in after):
                    raise Fail(t("{label}: row {b} is {row}; after its EOS ({eos_id}) it should hold only pad_id = "
                                 "{pad_id}: give finished sequences model.pad_id (not a hard-coded 0)", label=c.label,
                                 b=b, row=ids[b].tolist(), eos_id=c.eos_id, pad_id=c.pad_id))


@check("properties", "stops as soon as every sequence has produced EOS")
def early_stop(kit):
    c = CASES[0]  # every row ends by step T_out - 1 < max_new_tokens
    ids = _ids(kit.user(kit.inputs(c)), c)
    # Judged on the user's own tokens: the stop rule is to blame only where every row of theirs HAS produced EOS
    # before their last column. Rows that never produce EOS have wrong tokens, which numerics reports.
    eos = (ids[:, 1:] == c.eos_id).int().cumsum(1) > 0  # (B, T_out - 1): row b has produced EOS by this step
    done = eos.all(0).nonzero()
    if len(done) and ids.size(1) > int(done[0]) + 2:
        step = int(done[0]) + 1
        raise Fail(t("{label}: every sequence has produced EOS by step {step}, yet your ids have {got} columns: stop "
                     "the loop when every sequence is finished (they should have {want})", label=c.label,
                     step=step, got=ids.size(1), want=step + 1))


@check("properties", "picks the argmax: the same call twice gives the same ids")
def deterministic(kit):
    c = CASES[1]
    first, second = (_ids(kit.user(kit.inputs(c)), c) for _ in range(2))
    if first.shape != second.shape or not torch.equal(first, second):
        raise Fail(t("{label}: two identical calls gave different ids ({first} then {second})", label=c.label,
                     first=first[0].tolist(), second=second[0].tolist()),
                   t("your ids change from one identical call to the next: greedy decoding is deterministic, it takes "
                     "the argmax of the logits at every step; do not sample (torch.multinomial) or keep state between "
                     "calls"))


@check("properties", "decodes in eval mode without gradients, even when the model arrives in training mode")
def eval_mode(kit):
    c = CASES[0]
    model = make_model(c, dropout=0.3).train()  # dropout 0.3 in training mode: copying breaks down
    reply = kit.drive(fixtures.greedy_decode_calls, model, make_src(c), c.bos_id, c.eos_id, c.max_new)
    calls = reply["calls"]
    in_training = [name for name, training, _ in calls if training]
    if in_training:
        raise Fail(t("{label}, model handed over in training mode with dropout 0.3: model.{name} ran in training "
                     "mode", label=c.label, name=in_training[0]),
                   t("your code decodes in training mode, so dropout changes the tokens: call model.eval() before "
                     "decoding"))
    with_grad = [name for name, _, grad in calls if grad]
    if with_grad:
        raise Fail(t("{label}: model.{name} ran with gradients enabled", label=c.label, name=with_grad[0]),
                   t("your code decodes with gradients enabled, building a graph nobody uses: decode under "
                     "torch.no_grad() (or decorate greedy_decode with @torch.no_grad())"))
    want = kit.reference(inputs(c, "float64"))
    compare(_ids(reply["ids"], c), want, t("{label}, model handed over in training mode: ids", label=c.label),
            "(B, T_out)")


@check("properties", "the source is encoded once per call, not at every step", followup=True)
def encodes_once(kit):
    # Encoding at every step gives the same memory, so the same ids: it passes, with the question of its cost.
    # More encoder calls than rows is more than any batched or row-by-row decoder needs (steps > B here).
    c = CASES[0]
    reply = kit.drive(fixtures.greedy_decode_calls, make_model(c), make_src(c), c.bos_id, c.eos_id, c.max_new)
    encoded = sum(name == "encode" for name, _, _ in reply["calls"])
    if encoded > c.B:
        steps = sum(name == "decode" for name, _, _ in reply["calls"])
        raise Fail(t("{label}: model.encode ran {n} times for {B} sources ({steps} calls of model.decode). "
                     "Follow-up: what does that cost? The memory depends on the source only, so every encoder pass "
                     "after the first recomputes the same (B, T_s, D) tensor, once per generated token: encode once "
                     "before the loop, memory = model.encode(src), and pass it to every model.decode (model(src, ys) "
                     "runs the encoder too)", label=c.label, n=encoded, B=c.B, steps=steps))


@check("properties", "max_new_tokens = 0 gives the BOS column alone")
def zero_steps(kit):
    c = CASES[2]
    model, src, bos_id, eos_id, _ = kit.inputs(c)
    ids = kit.user((model, src, bos_id, eos_id, 0))
    compare(ids, torch.full((c.B, 1), c.bos_id, dtype=torch.long), t("{label}, max_new_tokens=0: ids", label=c.label),
            "(B, 1)")


def _ids(value, c):
    if not isinstance(value, torch.Tensor) or value.dim() != 2 or value.size(0) != c.B:
        shape = tuple(value.shape) if isinstance(value, torch.Tensor) else type(value).__name__
        raise Fail(t("{label}: greedy_decode should return a (B, T_out) tensor of ids with B = {B}, got {shape}",
                     label=c.label, B=c.B, shape=shape))
    return value
