"""With no generator given, a generator is made on x's device and seeded from the global random state (one draw of
it per call, so the global state moves on as F.dropout's does): the pattern of code that keeps CUDA and CPU draws
apart. Right on every device; on the meta device of the device check it has no generator to make, and must not fail."""
import torch


def dropout(x, p=0.5, training=True, generator=None):
    if not 0.0 <= p <= 1.0:
        raise ValueError(f"p must be in [0, 1], got {p}")
    if not training or p == 0.0:
        return x
    if p == 1.0:
        return x * 0.0
    if generator is None:
        seed = int(torch.randint(0, 2**62, (1,)))
        generator = torch.Generator(device=x.device).manual_seed(seed)
    keep = torch.rand(x.shape, generator=generator, device=x.device, dtype=x.dtype) >= p
    return x * keep / (1.0 - p)
