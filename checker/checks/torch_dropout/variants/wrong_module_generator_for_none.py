# expect: two calls in a row with generator=None gave the same mask
"""With no generator given, the mask is drawn from a generator of the module's, reset to seed 42 on every call "to
be reproducible": each training step drops the same elements, as if the network had one fixed sub-network."""
import torch

_DEFAULT = torch.Generator()


def dropout(x, p=0.5, training=True, generator=None):
    if not 0 <= p <= 1:
        raise ValueError(f"dropout probability has to be between 0 and 1, but got {p}")
    if not training or p == 0:
        return x
    if p == 1:
        return torch.zeros_like(x)
    if generator is None:
        generator = _DEFAULT.manual_seed(42)
    u = torch.rand(x.shape, generator=generator, dtype=x.dtype).to(x.device)
    return torch.where(u >= p, x / (1 - p), torch.zeros_like(x))
