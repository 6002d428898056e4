# followup: float32 arithmetic inside was recognised
"""mamba_ssm's selective_scan_ref (mamba_ssm/ops/selective_scan_interface.py, state-spaces/mamba), the real-valued,
variable-B, variable-C path: u and delta in float32, the bias and softplus, deltaA and deltaB_u by einsum, the loop
over L, D·u, z's silu, the result cast back to u's dtype. Adapted: einops' rearrange written as indexing, the
complex and grouped branches and return_last_state left out."""
import torch
import torch.nn.functional as F


def selective_scan(u, delta, A, B, C, D=None, z=None, delta_bias=None, delta_softplus=False):
    dtype_in = u.dtype
    u = u.float()
    delta = delta.float()
    if delta_bias is not None:
        delta = delta + delta_bias[..., None].float()
    if delta_softplus:
        delta = F.softplus(delta)
    batch, dim, dstate = u.shape[0], A.shape[0], A.shape[1]
    A = A.float()
    B = B.float()
    C = C.float()
    x = A.new_zeros((batch, dim, dstate))
    ys = []
    deltaA = torch.exp(torch.einsum("bdl,dn->bdln", delta, A))
    deltaB_u = torch.einsum("bdl,bnl,bdl->bdln", delta, B, u)
    for i in range(u.shape[2]):
        x = deltaA[:, :, i] * x + deltaB_u[:, :, i]
        y = torch.einsum("bdn,bn->bd", x, C[:, :, i])
        ys.append(y)
    y = torch.stack(ys, dim=2)
    out = y if D is None else y + u * D.float()[:, None]
    if z is not None:
        out = out * F.silu(z.float())
    return out.to(dtype=dtype_in)
