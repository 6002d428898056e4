"""The reference selective_scan equals mamba_ssm's selective_scan_ref, and the scan's closed form.

mamba_ssm: selective_scan_ref of mamba_ssm/ops/selective_scan_interface.py (state-spaces/mamba), re-typed offline for
the real-valued, variable-B, variable-C path, with float64 in place of its float32 (so that the comparison is exact)
and einops' rearrange written as indexing. The closed form: h_t = Σ_{s<=t} exp(Δ-weighted A summed over s+1..t)
Δ_s B_s u_s, as Mamba-2's segsum writes it.
"""

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_selective_scan import checks as spec

solution = engine.load_solution(catalogue.find("selective_scan"))


def selective_scan_ref(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    dtype_in = u.dtype
    u = u.double()
    delta = delta.double()
    if delta_bias is not None:
        delta = delta + delta_bias[..., None].double()
    if delta_softplus:
        delta = F.softplus(delta)
    batch, dim, dstate = u.shape[0], A.shape[0], A.shape[1]
    B = B.double()
    C = C.double()
    x = A.new_zeros((batch, dim, dstate))
    ys = []
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    last_state = None
    for i in range(u.shape[2]):
        x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        y = torch.einsum("bdn,bn->bd", x, C[:, :, i])
        if i == u.shape[2] - 1:
            last_state = x
        ys.append(y)
    y = torch.stack(ys, dim=2)  # (batch dim L)
    out = y if D is None else y + u * D[:, None]
    if z is not None:
        out = out * F.silu(z)
    out = out.to(dtype=dtype_in)
    return out, last_state


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_reference_equals_mamba_ssm_selective_scan_ref(c):
    args = spec.inputs(c, "float64")
    torch.testing.assert_close(solution.selective_scan(*args), selective_scan_ref(*args)[0], rtol=1e-12, atol=1e-12)


def test_the_scan_equals_its_closed_form():
    c = spec.CASES[2]
    u, delta, A, B, C, D, z, bias, softplus = spec.inputs(c, "float64")
    dt = F.softplus(delta)
    a = torch.einsum("bdl,dn->bdnl", dt, A)  # log-decay of each step
    cum = torch.cumsum(a, dim=-1)  # (B, D, N, L)
    decay = torch.exp(cum[..., :, None] - cum[..., None, :]).tril()  # [t, s] = exp(a_{s+1} + ... + a_t), s <= t
    h_terms = torch.einsum("bdnts,bns,bds->bdnt", decay, B, dt * u)
    want = torch.einsum("bdnt,bnt->bdt", h_terms, C) + u * D[:, None]
    torch.testing.assert_close(solution.selective_scan(u, delta, A, B, C, D, None, None, True), want, rtol=1e-10,
                               atol=1e-10)


def test_a_state_that_forgets_at_once_gives_the_memoryless_output():
    """A → -inf: exp(ΔA) = 0, so h_t = Δ_t B_t u_t and y_t = Δ_t (C_t · B_t) u_t."""
    c = spec.CASES[1]
    u, delta, A, B, C, *_ = spec.inputs(c, "float64")
    A = torch.full_like(A, -1e4)
    want = delta * torch.einsum("bnl,bnl->bl", B, C)[:, None] * u
    torch.testing.assert_close(solution.selective_scan(u, delta, A, B, C), want, rtol=1e-12, atol=1e-12)
