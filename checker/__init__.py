"""kata: hand-write the Transformer and get a strict, truthful verdict."""

__version__ = "0.1.0"
