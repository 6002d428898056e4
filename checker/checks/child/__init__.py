"""What the checks hand to the child or run in it: given layers and models (pickled into the child
whole, so they must be importable there by name), and drivers, called as driver(user_module, *args)
through Kit.drive. Drivers return plain values and never judge; the parent compares.

The child runs drivers from this package only (sandbox.CHILD_PACKAGE).
"""


def load_state(module, state: dict) -> None:
    """Load the reference's weights into the user's module by name, strictly, keeping the module's own
    batch counters the reference has no use for (torch's BatchNorm keeps num_batches_tracked, and code
    written after it may too)."""
    own = {k: v for k, v in module.state_dict().items() if k.endswith("num_batches_tracked") and k not in state}
    module.load_state_dict({**state, **own}, strict=True)
