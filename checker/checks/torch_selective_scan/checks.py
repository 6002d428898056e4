"""Hidden checks: Mamba's selective scan (S6), as mamba_ssm's selective_scan_ref for a real A and B, C over time.

Every dimension its own size, and each of the optional parts on in some cases and off in others: the skip D, the
gate z, Δ's bias and its softplus (Mamba turns both on; with softplus off, Δ is given positive). A is negative,
as Mamba's -exp(A_log), spread so that exp(Δ·A) ranges from near 0 (a state that forgets at once) to near 1 (one
that remembers the whole sequence): a scan read in the wrong order or the wrong time shows on every case.
"""

import torch
import torch.nn.functional as F

from checker.kit import Fail, Mistake, case, check, compare, expect_structure, matches
from checker.lang import t

TARGET = "selective_scan"
OUTPUTS = [("y", "(B, D, L)")]
BATCH_INDEPENDENT = True
DEVICE = True  # the state h is created inside: it must follow u's device

CASES = [
    case(1, B=2, D=3, L=7, N=4, D_skip=1, z_gate=1, delta_bias=1, delta_softplus=1),
    case(2, B=3, D=4, L=5, N=2, D_skip=0, z_gate=0, delta_bias=0, delta_softplus=0),
    case(3, B=2, D=5, L=9, N=3, D_skip=1, z_gate=0, delta_bias=0, delta_softplus=1),
    case(4, B=1, D=2, L=6, N=5, D_skip=0, z_gate=1, delta_bias=1, delta_softplus=0),
]
TIMING = case(5, B=4, D=64, L=128, N=16, D_skip=1, z_gate=1, delta_bias=1, delta_softplus=1)


# ----------------------------------------------------------------------------- named mistakes
# One the error model cannot express: its order rule swaps two simple statements, not two if-blocks.


def _softplus_first(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    """The scan with softplus applied to delta before its bias is added."""
    if delta_softplus:
        delta = F.softplus(delta)
    if delta_bias is not None:
        delta = delta + delta_bias[:, None]
    h = u.new_zeros(u.shape[0], u.shape[1], A.shape[1])
    ys = []
    for t in range(u.shape[2]):
        h = torch.exp(delta[:, :, t, None] * A) * h + (delta[:, :, t] * u[:, :, t])[..., None] * B[:, None, :, t]
        ys.append(torch.einsum("bdn,bn->bd", h, C[:, :, t]))
    y = torch.stack(ys, dim=2) + (u * D[:, None] if D is not None else 0.0)
    return y * F.silu(z) if z is not None else y


MISTAKES = [
    Mistake("softplus before the bias", _softplus_first,
            "your Δ is softplus(delta) + delta_bias: selective_scan_ref adds the bias first, delta + delta_bias, then "
            "applies softplus, so that Δ stays positive and exp(Δ·A) a decay in (0, 1); Mamba's dt bias is set so that "
            "softplus(bias) starts between dt_min and dt_max"),
]


def inputs(c, dtype):
    g = c.generator()
    d = getattr(torch, dtype)

    def randn(*shape):
        return torch.randn(*shape, generator=g, dtype=torch.float64)

    u = randn(c.B, c.D, c.L)
    # Δ: before softplus any sign (Mamba's dt projection); without softplus given positive, 0.05 .. 1.5
    delta = randn(c.B, c.D, c.L) if c.delta_softplus else 0.05 + 1.45 * torch.rand(c.B, c.D, c.L, generator=g,
                                                                                    dtype=torch.float64)
    A = -torch.exp(randn(c.D, c.N))  # (D, N) < 0, as -exp(A_log)
    Bm, Cm = randn(c.B, c.N, c.L), randn(c.B, c.N, c.L)
    D = randn(c.D) if c.D_skip else None
    z = randn(c.B, c.D, c.L) if c.z_gate else None
    bias = 0.5 * randn(c.D) if c.delta_bias else None
    return tuple(x.to(d) if isinstance(x, torch.Tensor) else x for x in (u, delta, A, Bm, Cm, D, z, bias)) + \
        (bool(c.delta_softplus),)


@check("structure", "selective_scan(u, delta, A, B, C, D, z, delta_bias, delta_softplus) is a function")
def structure(kit):
    expect_structure(kit, TARGET, module=False, params=["u", "delta", "A", "B", "C", "D", "z", "delta_bias",
                                                        "delta_softplus"])


@check("numerics", "the defaults: D=None, z=None, delta_bias=None, delta_softplus=False (no skip, no gate, Δ as given)")
def defaults(kit):
    c = CASES[1]  # every optional part off
    args = kit.inputs(c)[:5]
    if not matches(kit.user(kit.inputs(c)), kit.reference(kit.inputs(c))):
        return  # wrong with every argument given: the numerics checks say how
    try:
        compare(kit.user(args), kit.reference(args), "y", "(B, D, L)")
    except Fail as fail:
        raise Fail(t("{label}, called as selective_scan(u, delta, A, B, C): {fail}", label=c.label,
                     fail=fail.message),
                   t("a default differs from the contract's: D=None (no skip), z=None (no gate), delta_bias=None, "
                     "delta_softplus=False, as selective_scan_ref")) from None
