"""The fixed language model the beam_search checks hand to the user's code.

TableModel(prefixes (N, t) int64) -> (N, V) float64 log-probabilities of the next token, read from a
seeded table indexed by the last two tokens of each prefix (a second-order Markov chain; the first
step, with BOS alone, has its own row). Deterministic and cheap, so an exhaustive search over every
sequence is affordable on a tiny vocabulary. It records every call (in the child) so the checks can
see how the search called it, and it refuses malformed prefixes, or more than max_prefixes (set to
beam_size by the checks) at once, with a message naming the contract: a beam that grows without a
global cut would otherwise run for minutes.
"""

import torch
from torch import Tensor, nn

from checker.errors import Said


class TableModel(nn.Module):
    """log p(next | previous-but-one, previous): a (V + 1, V, V) table; index V = 'no token' (first step)."""

    def __init__(self, vocab: int, bos_id: int, seed: int, spread: float = 1.5, eos_id: int | None = None,
                 eos_bias: float = 0.0):
        super().__init__()
        g = torch.Generator().manual_seed(seed)
        logits = torch.randn(vocab + 1, vocab, vocab, generator=g, dtype=torch.float64) * spread
        if eos_id is not None:
            logits[..., eos_id] += eos_bias  # a likelier EOS: hypotheses finish early
        self.register_buffer("table", logits.log_softmax(dim=-1))  # (V + 1, V, V)
        self.vocab, self.bos_id = vocab, bos_id
        self._made = dict(vocab=vocab, bos_id=bos_id, seed=seed, spread=spread, eos_id=eos_id, eos_bias=eos_bias)
        self.calls: list = []  # one [N, t, rows that hold eos after BOS] per call, when eos_id is watched
        self.watch_eos: int | None = None
        self.max_prefixes: int | None = None  # beam_size: more live hypotheses than that break the contract

    def extra_repr(self) -> str:
        """How to build the same model in a REPL (`kata check beam_search --case N` prints it)."""
        return ", ".join(f"{k}={v!r}" for k, v in self._made.items()) + "; from checker.checks.torch_beam_search.driver"

    def forward(self, prefixes: Tensor) -> Tensor:
        if not isinstance(prefixes, Tensor) or prefixes.dim() != 2 or prefixes.dtype != torch.int64:
            shape = tuple(prefixes.shape) if isinstance(prefixes, Tensor) else type(prefixes).__name__
            dtype = f" {prefixes.dtype}" if isinstance(prefixes, Tensor) else ""
            raise Said("the model takes prefixes as one (N, t) int64 tensor (N hypotheses of t tokens, BOS first), "
                       "got {got}", got=f"{shape}{dtype}")
        if prefixes.size(1) == 0 or (prefixes.size(0) and (prefixes[:, 0] != self.bos_id).any()):
            raise Said("every prefix handed to the model starts with BOS ({bos_id}): got rows starting with {first} "
                       "(shape {shape})", bos_id=self.bos_id, first=str(prefixes[:, :1].flatten().tolist()[:5]),
                       shape=str(tuple(prefixes.shape)))
        if self.max_prefixes is not None and prefixes.size(0) > self.max_prefixes:
            raise Said("the model was handed {count} prefixes at once, more than beam_size = {beam_size}: the beam "
                       "holds at most beam_size live hypotheses; keep only the beam_size best extensions of all N * V "
                       "at every step (one global topk)", count=prefixes.size(0), beam_size=self.max_prefixes)
        if self.watch_eos is not None:
            after_eos = int((prefixes[:, 1:] == self.watch_eos).any(dim=1).sum())
            self.calls.append([prefixes.size(0), prefixes.size(1), after_eos])
        last = prefixes[:, -1]  # (N,)
        before = prefixes[:, -2] if prefixes.size(1) > 1 else torch.full_like(last, self.vocab)  # (N,)
        return self.table[before, last].clone()  # (N, V)

    def log_prob(self, ids: list[int]) -> list[float]:
        """The log-probability of each token of ids (BOS excluded) after BOS and the tokens before it."""
        seq = [self.bos_id] + list(ids)
        out = []
        for i in range(1, len(seq)):
            before = seq[i - 2] if i >= 2 else self.vocab
            out.append(float(self.table[before, seq[i - 1], seq[i]]))
        return out


# ============================================================================ driver (run in the child)


def beam_search_calls(user, model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty):
    """The user's result, and one [N, t, prefixes holding EOS after BOS] per model call."""
    model.watch_eos = eos_id
    model.calls.clear()
    result = user.beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty)
    return {"result": result, "calls": [list(call) for call in model.calls]}
