"""Driver for the beam_search checks: runs in the child, reports how the user's search called the model."""


def beam_search_calls(user, model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty):
    """The user's result, and one [N, t, prefixes holding EOS after BOS] per model call."""
    model.watch_eos = eos_id
    model.calls.clear()
    result = user.beam_search(model, bos_id, eos_id, beam_size, max_new_tokens, length_penalty)
    return {"result": result, "calls": [list(call) for call in model.calls]}
