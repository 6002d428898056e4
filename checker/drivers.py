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


def train_step_once(user, model, batch, pad_id, lr, seed):
    """One call of the user's train_step, with an SGD optimizer built here and stale gradients planted.

    The stale gradients (seeded noise) must be cleared by train_step before its backward pass.
    Returns the loss it returned, every parameter afterwards, and how the model was called.
    """
    import torch

    from checker import fixtures_transformer as fixtures

    optimizer = fixtures.SGD(model.parameters(), lr=lr)  # torch.optim.SGD's update, without importing torch._dynamo
    g = torch.Generator().manual_seed(seed)
    for p in model.parameters():
        p.grad = torch.randn(p.shape, generator=g, dtype=torch.float64).to(p.dtype)
    model.calls.clear()
    loss = user.train_step(model, optimizer, *batch, pad_id)
    return {"loss": loss, "params": {n: p.detach().clone() for n, p in model.named_parameters()},
            "calls": [list(call) for call in model.calls]}


def copy_task_training(user, config):
    """Train a fresh small Transformer with the user's make_copy_batch and train_step; decode held-out rows.

    Returns the loss of every step, the held-out sources and the checker's own greedy decoding of them.
    """
    import torch

    from checker import fixtures_transformer as fixtures

    c = config
    torch.manual_seed(c["seed"])
    model = fixtures.Transformer(c["vocab"], c["vocab"], d_model=c["d_model"], num_heads=c["num_heads"],
                                 d_ff=c["d_ff"], num_layers=c["num_layers"], dropout=0.0, max_len=16, pad_id=0)
    optimizer = fixtures.Adam(model.parameters(), lr=c["lr"])  # torch.optim.Adam's update
    g = torch.Generator().manual_seed(c["seed"])
    losses = []
    for _ in range(c["steps"]):
        src, tgt_inp, tgt_out = user.make_copy_batch(c["batch"], c["seq_len"], c["vocab"], g)
        losses.append(float(user.train_step(model, optimizer, src, tgt_inp, tgt_out, 0)))
    held = torch.randint(3, c["vocab"], (c["held_out"], c["seq_len"]), generator=torch.Generator().manual_seed(c["seed"] + 1))
    return {"losses": losses, "src": held, "pred": fixtures.greedy(model, held, 1, 2, c["seq_len"] + 1)}
