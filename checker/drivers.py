"""Harness code that runs in the child process and drives the user's code (see Kit.drive).

A driver is called as driver(user_module, *args) and returns plain values (tensors, numbers,
lists), which the parent judges. Drivers never judge anything themselves.
"""


# ----------------------------------------------------------------------------- greedy_decode, copy_task (torch)


def greedy_decode_calls(user, model, src, bos_id, eos_id, max_new_tokens):
    """The user's greedy_decode on a RecordingTransformer: its ids, and how the model was called.

    calls: [method, model in training mode, gradients enabled] for every encode/decode/forward.
    """
    model.calls.clear()
    ids = user.greedy_decode(model, src, bos_id, eos_id, max_new_tokens)
    return {"ids": ids, "calls": [list(call) for call in model.calls]}
