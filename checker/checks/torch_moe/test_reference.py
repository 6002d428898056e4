"""The reference MoE equals the dense computation on the same weights (every expert on every token,
weighted by the renormalised top-k router probabilities, zero elsewhere), HF Mixtral's
load_balancing_loss_func for the aux loss, and Switch's f·P formula for k = 1; and accepting HF's
float32 router softmax opens no door to a named mistake."""

import pytest
import torch
import torch.nn.functional as F

from checker import catalogue, engine
from checker.checks.torch_moe import checks as spec
from checker.kit import FLOAT32_INSIDE, Kit, matches

solution = engine.load_solution(catalogue.find("moe"))
kit = Kit(spec, None, solution)


def _module(c):
    module = solution.MoE(**spec.init(c)).double()
    module.load_state_dict(kit.state(c, "float64"))
    return module.eval()


def hf_load_balancing_loss(router_logits, num_experts, top_k):
    """transformers' load_balancing_loss_func without an attention mask, as written there."""
    routing_weights = F.softmax(router_logits, dim=-1)
    _, selected_experts = torch.topk(routing_weights, top_k, dim=-1)
    expert_mask = F.one_hot(selected_experts, num_experts)
    tokens_per_expert = torch.mean(expert_mask.to(routing_weights.dtype), dim=0)
    router_prob_per_expert = torch.mean(routing_weights, dim=0)
    return torch.sum(tokens_per_expert * router_prob_per_expert.unsqueeze(0)) * num_experts


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
def test_reference_equals_the_dense_computation_and_hf_aux_loss(c):
    module = _module(c)
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        y, aux = module(x)
        h = x.reshape(-1, c.D)
        logits = module.gate(h)
        probs = logits.softmax(-1)
        top, chosen = probs.topk(c.k, dim=-1)
        W = torch.zeros_like(probs).scatter(-1, chosen, top / top.sum(-1, keepdim=True))  # (N, E)
        dense = torch.einsum("ne,end->nd", W, torch.stack([expert(h) for expert in module.experts]))
    torch.testing.assert_close(y, dense.reshape(c.B, c.T, c.D), rtol=1e-12, atol=1e-12)
    torch.testing.assert_close(aux, hf_load_balancing_loss(logits, c.E, c.k), rtol=1e-12, atol=1e-12)


def test_top_1_is_switch_transformers_loss():
    """k = 1: f_i is the share of tokens whose argmax is i, and aux = E · Σ f_i P_i (Fedus et al. eq. 4)."""
    c = spec.CASES[1]
    module = _module(c)
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        _, aux = module(x)
        probs = module.gate(x).softmax(-1).reshape(-1, c.E)
    f = torch.stack([(probs.argmax(-1) == i).double().mean() for i in range(c.E)])
    assert abs(aux.item() - c.E * (f * probs.mean(0)).sum().item()) < 1e-12


def test_softmax_of_the_top_k_logits_gives_the_same_weights():
    """Mixtral's two orders: softmax over all then top-k renormalised == top-k logits then softmax over k."""
    g = torch.Generator().manual_seed(2)
    logits = torch.randn(20, 7, generator=g, dtype=torch.float64)
    top, idx = logits.softmax(-1).topk(3, dim=-1)
    top_logits, idx2 = logits.topk(3, dim=-1)
    assert torch.equal(idx, idx2)
    torch.testing.assert_close(top / top.sum(-1, keepdim=True), top_logits.softmax(-1), rtol=1e-12, atol=1e-14)


def test_ties_pick_exactly_k_and_a_balanced_router_gives_k():
    c = spec.CASES[2]
    module = _module(c)
    with torch.no_grad():
        module.gate.weight.zero_()
        (x,) = spec.inputs(c, "float64")
        _, aux = module(x)
    assert abs(aux.item() - c.k) < 1e-12
    assert torch.topk(torch.zeros(5, c.E), c.k, dim=-1).indices.unique(dim=-1).shape[-1] == c.k


def _outputs(impl):
    k = Kit(spec, None, solution)
    return [k.reference(spec.inputs(c, "float64"), case=c, impl=impl) for c in spec.CASES]


@pytest.mark.parametrize("mistake", spec.MISTAKES, ids=lambda m: m.name)
def test_every_mistake_stays_outside_the_float32_tolerance_on_some_case(mistake):
    (hf,) = spec.CONVENTIONS
    for want in (_outputs(None), _outputs(hf.impl)):
        got = _outputs(mistake.impl)
        assert not all(matches(u, w, FLOAT32_INSIDE) for g, e in zip(got, want) for u, w in zip(g, e))


def test_hf_float32_router_is_within_its_tolerance_but_not_float64s():
    (hf,) = spec.CONVENTIONS
    ours, theirs = _outputs(None), _outputs(hf.impl)
    assert all(matches(u, w, FLOAT32_INSIDE) for g, e in zip(theirs, ours) for u, w in zip(g, e))
    assert not all(matches(u, w) for g, e in zip(theirs, ours) for u, w in zip(g, e))


def test_each_expert_runs_only_on_its_tokens():
    c = spec.CASES[0]
    module = _module(c)
    rows = [0] * c.E
    for e, expert in enumerate(module.experts):
        expert.register_forward_hook(lambda _m, args, _o, e=e: rows.__setitem__(e, rows[e] + args[0].shape[0]))
    (x,) = spec.inputs(c, "float64")
    with torch.no_grad():
        module(x)
    assert sum(rows) == c.B * c.T * c.k
