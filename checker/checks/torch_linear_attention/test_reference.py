"""The linear attention reference against the quadratic form with the same feature map (written
element by element with the kernel phi(q) · phi(k)), the paper's RNN recurrence (Katharopoulos et al.
2020, eq. 16-20), and the memory bound the checks hold it to."""

import pytest
import torch
import torch.nn.functional as F

from checker.catalogue import find
from checker.checks.torch_linear_attention import checks as checks
from checker.engine import load_solution

solution = load_solution(find("linear_attention"))


def quadratic(q, k, v, causal):
    """out_i = sum_j sim(q_i, k_j) v_j / sum_j sim(q_i, k_j), sim(q, k) = (elu(q) + 1) · (elu(k) + 1)."""
    B, H, T_q, _ = q.shape
    T_k = k.shape[2]
    out = torch.zeros(B, H, T_q, v.shape[-1], dtype=q.dtype)
    for i in range(T_q):
        keys = range(i + 1) if causal else range(T_k)
        sim = torch.stack([((F.elu(q[:, :, i]) + 1) * (F.elu(k[:, :, j]) + 1)).sum(-1) for j in keys], dim=-1)
        out[:, :, i] = (sim.unsqueeze(-1) * v[:, :, : len(keys)]).sum(-2) / sim.sum(-1, keepdim=True)
    return out


def recurrent(q, k, v):
    """The paper's RNN: s_i = s_{i-1} + phi(k_i) v_iᵀ, z_i = z_{i-1} + phi(k_i), y_i = phi(q_i)ᵀ s_i / phi(q_i)ᵀ z_i."""
    phi_q, phi_k = F.elu(q) + 1, F.elu(k) + 1
    s = torch.zeros(*q.shape[:2], q.shape[-1], v.shape[-1], dtype=q.dtype)
    z = torch.zeros(*q.shape[:2], q.shape[-1], dtype=q.dtype)
    ys = []
    for i in range(q.shape[2]):
        s = s + phi_k[:, :, i].unsqueeze(-1) * v[:, :, i].unsqueeze(-2)
        z = z + phi_k[:, :, i]
        ys.append(torch.einsum("bhd,bhde->bhe", phi_q[:, :, i], s) / torch.einsum("bhd,bhd->bh", phi_q[:, :, i], z)[..., None])
    return torch.stack(ys, dim=2)


@pytest.mark.parametrize("c", checks.CASES + checks._MEMORY_CASES, ids=lambda c: c.label)
def test_equals_the_quadratic_form(c):
    q, k, v, causal = checks.inputs(c, "float64")
    torch.testing.assert_close(solution.linear_attention(q, k, v, causal), quadratic(q, k, v, causal),
                               rtol=1e-10, atol=1e-12)


@pytest.mark.parametrize("c", [c for c in checks.CASES + checks._MEMORY_CASES if c.causal], ids=lambda c: c.label)
def test_causal_equals_the_rnn_recurrence(c):
    q, k, v, _ = checks.inputs(c, "float64")
    torch.testing.assert_close(solution.linear_attention(q, k, v, True), recurrent(q, k, v), rtol=1e-10, atol=1e-12)


def test_feature_map_is_elu_plus_one():
    x = torch.linspace(-5, 5, 21, dtype=torch.float64)
    torch.testing.assert_close(solution.feature_map(x), torch.where(x > 0, x + 1, torch.exp(x)))


@pytest.mark.parametrize("c", checks._MEMORY_CASES, ids=lambda c: c.label)
def test_the_reference_fits_the_memory_bound_and_a_quadratic_form_does_not(c):
    from checker.checks.torch_linear_attention.driver import linear_attention_memory

    class User:  # what the child hands the driver: the user's module
        linear_attention = staticmethod(solution.linear_attention)

    reply = linear_attention_memory(User, *checks.inputs(c, "float64"))
    assert reply["largest"] <= checks.bound(c) and reply["square"] is None and not reply["fused"]
    assert c.T_q * c.T_k > checks.bound(c)  # one head's matrix of weights already breaks the bound


def test_every_named_mistake_differs_from_the_reference_beyond_the_accepted_epsilon():
    for m in checks.MISTAKES:
        differs = False
        for c in checks.CASES:
            args = checks.inputs(c, "float64")
            want = solution.linear_attention(*args)
            got = m.impl(*args)
            close = torch.isclose(got, want, rtol=checks._EPS_TOL[0], atol=checks._EPS_TOL[1], equal_nan=True)
            differs = differs or not bool(close.all())
        assert differs, m.name
