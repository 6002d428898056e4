"""The fixed language models the speculative_decoding checks hand to the user's code, and its driver.

TableLM(ids (1, t) int64) -> logits (1, t, V) float64: the logits of the next token after every
prefix ids[:, :i + 1], read from a seeded table indexed by the last two tokens (a second-order Markov
chain; position 0 has its own row). Causal by construction, deterministic, and cheap. The draft is the
target's table plus seeded noise (a "smaller model" that agrees with the target most of the time), the
target itself, or the target negated (it never proposes the target's choice). Every call is recorded in
the child (the length of its input), so the checks can count the target's calls; a model called more
than max_calls times refuses, naming the contract: a loop that makes no progress would otherwise run
until the time limit.
"""

import torch
from torch import Tensor, nn

from checker.errors import Said


class TableLM(nn.Module):
    """logits(next | previous-but-one, previous): a (V + 1, V, V) table; index V = 'no token' (position 0)."""

    def __init__(self, vocab: int, seed: int, spread: float = 2.0, *, noise: float = 0.0, noise_seed: int = 0,
                 sign: float = 1.0, eos_id: int | None = None, eos_bias: float = 0.0, name: str = "target"):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        table = torch.randn(vocab + 1, vocab, vocab, generator=g, dtype=torch.float64) * spread
        if eos_id is not None:
            table[..., eos_id] += eos_bias  # a likelier EOS: the greedy decode ends mid-way
        if noise:
            table = table + noise * torch.randn(table.shape, generator=torch.Generator().manual_seed(noise_seed),
                                                dtype=torch.float64)
        self.register_buffer("table", sign * table)  # (V + 1, V, V)
        self.vocab, self.name = vocab, name
        self._made = dict(vocab=vocab, seed=seed, spread=spread, noise=noise, noise_seed=noise_seed, sign=sign,
                          eos_id=eos_id, eos_bias=eos_bias, name=name)
        self.calls: list = []  # the length t of every call's input
        self.log: list | None = None  # shared by the target and the draft: (name, t) of every call, in order
        self.max_calls: int | None = None

    def extra_repr(self) -> str:
        """How to build the same model in a REPL (`kata check speculative_decoding --case N` prints it)."""
        return ", ".join(f"{k}={v!r}" for k, v in self._made.items()) + \
            "; from checker.checks.torch_speculative_decoding.driver"

    def forward(self, ids: Tensor) -> Tensor:
        if not isinstance(ids, Tensor) or ids.dim() != 2 or ids.size(0) != 1 or ids.dtype != torch.int64:
            shape = tuple(ids.shape) if isinstance(ids, Tensor) else type(ids).__name__
            dtype = f" {ids.dtype}" if isinstance(ids, Tensor) else ""
            raise Said("the {name} model takes ids as one (1, t) int64 tensor (a batch of one sequence), got "
                       "{got}: torch.tensor([ids])", name=self.name, got=f"{shape}{dtype}")
        if ids.size(1) == 0 or bool(((ids < 0) | (ids >= self.vocab)).any()):
            raise Said("the {name} model got ids {ids}: it needs at least one token, each in [0, {vocab})",
                       name=self.name, ids=str(ids.tolist()[0][:12]), vocab=self.vocab)
        self.calls.append(int(ids.size(1)))
        if self.log is not None:
            self.log.append((self.name, int(ids.size(1))))
        if self.max_calls is not None and len(self.calls) > self.max_calls:
            raise Said("the {name} model was called more than {calls} times for this generation: every call of the "
                       "target must add at least one token (the accepted drafts, then the target's own token), so the "
                       "loop never stalls", name=self.name, calls=self.max_calls)
        last = ids[0]  # (t,)
        before = torch.cat([last.new_full((1,), self.vocab), last[:-1]])  # (t,): 'no token' before position 0
        return self.table[before, last].unsqueeze(0).clone()  # (t, V) -> (1, t, V)


# ============================================================================ driver (run in the child)


def speculative_run(user, target, draft, prompt, max_new_tokens, k, eos_id, max_target_calls):
    """The user's result, the length of each target and draft call (and of both, in order), and the prompt list
    afterwards."""
    target.calls.clear()
    draft.calls.clear()
    target.log = draft.log = []
    target.max_calls = max_target_calls
    given = list(prompt)
    with torch.no_grad():
        result = user.speculative_decode(target, draft, given, max_new_tokens, k, eos_id)
    if isinstance(result, Tensor):
        result = {"tensor": result.tolist()}
    return {"result": result, "target_calls": list(target.calls), "draft_calls": list(draft.calls),
            "log": list(target.log), "prompt_after": given}
