"""Hidden checks: a Mixtral-style top-k mixture-of-experts layer with the Switch load-balancing loss."""

import torch
import torch.nn.functional as F
from torch import nn

from checker.checks.torch_moe.driver import routed_forward
from checker.kit import FLOAT32_INSIDE, Convention, Fail, Mistake, as_outputs, case, check, compare, \
    expect_structure
from checker.lang import t

TARGET = "MoE"
OUTPUTS = [("output", "(B, T, D)"), ("aux_loss", "()")]
BATCH_INDEPENDENT = True  # a token's output depends on that token alone (the aux loss is batch-wide)

# Every dimension its own size; k = 2 (Mixtral), k = 1 (Switch: renormalised weights are all 1),
# k = 3 of 6, and k = E = 3 (every expert on every token: the dense softmax mixture). The router's
# weights are the reference's, moved by the kit, so its logits spread over about ±1 and no two
# experts tie by chance.
CASES = [
    case(1, B=2, T=5, D=6, d_ff=10, E=4, k=2),
    case(2, B=3, T=4, D=8, d_ff=12, E=5, k=1),
    case(3, B=2, T=7, D=5, d_ff=9, E=6, k=3),
    case(4, B=1, T=9, D=4, d_ff=7, E=3, k=3),
]
TIMING = case(5, B=8, T=128, D=64, d_ff=128, E=8, k=2)


def init(c):
    return {"d_model": c.D, "d_ff": c.d_ff, "num_experts": c.E, "top_k": c.k}


def inputs(c, dtype):
    return (torch.randn(c.B, c.T, c.D, generator=c.generator(), dtype=torch.float64).to(getattr(torch, dtype)),)


# ----------------------------------------------------------------------------- named mistakes


class _Expert(nn.Module):
    def __init__(self, d_model, d_ff):
        super().__init__()
        self.w1 = nn.Linear(d_model, d_ff, bias=False)
        self.w2 = nn.Linear(d_ff, d_model, bias=False)
        self.w3 = nn.Linear(d_model, d_ff, bias=False)

    def forward(self, x):
        return self.w2(F.silu(self.w1(x)) * self.w3(x))


def _variant(*, renorm=True, combine="weighted", softmax_over="experts", float32=False, aux_factor="E",
             aux_p="softmax", aux_f="counts"):
    """MoE with knobs, computed densely (every expert on every token, zero weights elsewhere: the same numbers);
    every knob at its default gives the right answer."""

    class Wrong(nn.Module):
        def __init__(self, d_model, d_ff, num_experts, top_k=2):
            super().__init__()
            self.num_experts, self.top_k = num_experts, top_k
            self.gate = nn.Linear(d_model, num_experts, bias=False)
            self.experts = nn.ModuleList(_Expert(d_model, d_ff) for _ in range(num_experts))

        def forward(self, x):
            B, T, D = x.shape
            E, k = self.num_experts, self.top_k
            h = x.reshape(-1, D)
            logits = self.gate(h)
            probs = logits.float().softmax(-1).to(x.dtype) if float32 else \
                logits.softmax(-1 if softmax_over == "experts" else 0)
            top, chosen = probs.topk(k, dim=-1)
            w = top / top.sum(-1, keepdim=True) if renorm else top
            if renorm == "softmax of probs":  # a second softmax, over the k chosen probabilities
                w = top.softmax(-1)
            if combine == "unweighted":
                w = torch.ones_like(w)
            elif combine == "uniform":
                w = torch.full_like(w, 1.0 / k)
            W = torch.zeros_like(probs).scatter(-1, chosen, w)
            y = sum(W[:, e:e + 1] * expert(h) for e, expert in enumerate(self.experts)).reshape(B, T, D)
            f = F.one_hot(chosen, E).to(x.dtype).sum(1).mean(0)
            if aux_f == "soft":
                f = probs.mean(0)
            elif aux_f == "top-1":
                f = F.one_hot(chosen[:, 0], E).to(x.dtype).mean(0)
            P = probs.mean(0) if aux_p == "softmax" else W.mean(0)
            if aux_p == "batch axis":  # probs (B, T, E) averaged over B alone: (T, E)
                P = probs.view(B, T, E).mean(0)
            scale = {"E": E, "none": 1.0, "E/k": E / k, "E squared": E * E}[aux_factor]
            return y, scale * (f * P).sum()

    return Wrong


MISTAKES = [
    Mistake("weights not renormalised", _variant(renorm=False),
            "your output mixes the experts with their full-softmax probabilities, not renormalised over the chosen "
            "k (Switch's and Qwen-MoE's norm_topk_prob=False): Mixtral divides the top-k weights by their sum, "
            "weights / weights.sum(-1, keepdim=True), or takes a softmax over the k selected logits only"),
    Mistake("softmax of the top-k probabilities", _variant(renorm="softmax of probs"),
            "your weights are a softmax of the k chosen PROBABILITIES, a second softmax: renormalise them by their "
            "sum, weights / weights.sum(-1, keepdim=True), or take the softmax of the k chosen LOGITS (Mixtral's "
            "code); both give the same weights, a softmax of probabilities does not"),
    Mistake("uniform mean of the experts", _variant(combine="uniform"),
            "your output is the plain mean of the k experts' outputs: weight each by its renormalised router "
            "probability"),
    Mistake("softmax over the tokens", _variant(softmax_over="tokens"),
            "your router's softmax runs over the tokens (dim=0 of the (N, E) logits): each token's probabilities "
            "are over the E experts, softmax(dim=-1)"),
    Mistake("aux loss divided by k", _variant(aux_factor="E/k"),
            "your aux loss is the contract's divided by k: here f_i counts every token routed to expert i (each "
            "token once for each of its k experts, Σ f_i = k), as HF Mixtral's load_balancing_loss_func; a "
            "balanced router gives k"),
    Mistake("aux loss with E²", _variant(aux_factor="E squared"),
            "your aux loss has the factor E twice: E · Σ_i f_i · P_i, with f_i and P_i fractions (divided by N)"),
    Mistake("aux loss from the top-k weights", _variant(aux_p="topk"),
            "your aux loss takes P_i from the renormalised top-k weights: P_i is the mean over the tokens of the "
            "FULL softmax probability of expert i, before top-k, probs.mean over the tokens"),
    Mistake("aux loss counts the first choice only", _variant(aux_f="top-1"),
            "your aux loss counts only each token's first choice in f_i: count every expert a token is routed "
            "to, all k of them (F.one_hot(chosen, E) summed over the k slots)"),
]

_HF = _variant(float32=True)

# HF's MixtralSparseMoeBlock computes the router softmax in float32 (F.softmax(..., dtype=torch.float)) and
# casts the weights back: on float64 input that is right to ~1e-7, what Mixtral's own code does. Every named
# mistake stays outside FLOAT32_INSIDE on some case (checker/checks/torch_moe/test_reference.py holds them to that).
CONVENTIONS = (
    Convention("float32 router softmax (HF Mixtral)", (
        "your float64 output is right to float32's precision (~1e-7), not float64's: the router softmax is "
        "computed in float32, as Hugging Face's MixtralSparseMoeBlock does (F.softmax(router_logits, dim=1, "
        "dtype=torch.float)). This kata's reference keeps the input's dtype; float32 routing was allowed for every "
        "later check"), impl=_HF, tol=FLOAT32_INSIDE),
)


# ----------------------------------------------------------------------------- checks


@check("structure", "MoE is an nn.Module with gate = Linear(d_model, num_experts, bias=False) and a ModuleList of "
                    "num_experts given Experts")
def structure(kit):
    expect_structure(kit, TARGET, module=True, params=["d_model", "d_ff", "num_experts", "top_k"], forward=["x"],
                     init={"d_model": 6, "d_ff": 10, "num_experts": 4, "top_k": 2})


@check("numerics", "the default top_k is 2 (Mixtral's): MoE(d_model, d_ff, num_experts)")
def default_top_k(kit):
    c = CASES[0]  # k = 2
    settings = {k: v for k, v in init(c).items() if k != "top_k"}
    (x,) = kit.inputs(c)
    # against the user's own MoE(..., top_k=2): the numerics checks judge that one
    got = as_outputs(kit.user((x,), init=settings, state=kit.state(c, "float64")), OUTPUTS)
    want = as_outputs(kit.user((x,), case=c), OUTPUTS)
    try:
        for (name, legend), u, e in zip(OUTPUTS, got, want):
            compare(u, e, name, legend)
    except Fail as fail:
        raise Fail(t("{label}, built without top_k: {fail}; the default is top_k=2, Mixtral's", label=c.label,
                     fail=fail)) from None


def _reference(kit, c, state=None):
    """The reference MoE with the case's weights (or state), float64, eval mode."""
    module = getattr(kit.solution, TARGET)(**init(c)).double()
    module.load_state_dict(state or kit.state(c, "float64"))
    return module.eval()


def _routes(kit, c, state=None):
    """[set of token indices each expert received], calls per expert, the user's outputs; and the tokens."""
    (x,) = kit.inputs(c)
    reply = kit.drive(routed_forward, TARGET, init(c), state or kit.state(c, "float64"), x)
    tokens = x.reshape(-1, c.D)
    received = []
    for e, rows in enumerate(reply["rows"]):
        if rows.numel() and rows.shape[-1] != c.D:
            raise Fail(t("{label}: expert {e} received rows of size {got}, not d_model = {D}: pass it tokens of x, "
                         "expert(x[b, t]) of shape (n_e, D)", label=c.label, e=e, got=rows.shape[-1], D=c.D))
        same = (rows[:, None, :] == tokens[None, :, :]).all(-1)  # (rows, N)
        if not bool(same.any(-1).all()):
            raise Fail(t("{label}: expert {e} received inputs that are not tokens of x", label=c.label, e=e),
                       t("run each expert on the tokens themselves and multiply its OUTPUT by the router weight, "
                         "weights · expert(x)"))
        received.append(same.nonzero()[:, 1].tolist())
    return received, reply["calls"], reply["value"]


@check("properties", "each token runs through its k experts only: the tokens every expert receives are counted")
def sparse_dispatch(kit):
    for c in CASES:
        received, _, _ = _routes(kit, c)
        (x,) = kit.inputs(c)
        module = _reference(kit, c)
        with torch.no_grad():
            chosen = module.gate(x.reshape(-1, c.D)).topk(c.k, dim=-1).indices  # the reference's choice
        N = c.B * c.T
        total = sum(len(r) for r in received)
        if total == 0:
            raise Fail(t("{label}: no expert was called as a module: call self.experts[e](tokens), so that each "
                         "expert's forward runs on its tokens", label=c.label))
        if c.k < c.E and all(len(r) >= N for r in received):
            raise Fail(t("{label}: every expert received all {N} tokens, {total} rows in all", label=c.label, N=N,
                         total=total),
                       t("every token is sent to every expert, a dense mixture with zero weights. That costs E/k = "
                         "{ratio:g} times the compute; gather each expert's tokens (torch.where(chosen == e)) and run "
                         "it on those only", ratio=c.E / c.k))
        for e, rows in enumerate(received):
            want = sorted((chosen == e).any(-1).nonzero().flatten().tolist())
            if sorted(set(rows)) != want or len(rows) != len(want):
                raise Fail(t("{label}: expert {e} received {got} token(s) ({rows}), the reference routes {want_n} "
                             "token(s) to it ({want}): each token goes to the k experts of highest router probability, "
                             "each of them once", label=c.label, e=e, got=len(rows), rows=sorted(rows)[:8],
                             want_n=len(want), want=want[:8]))


@check("properties", "ties: with all router logits equal, each token still goes to exactly k experts, "
                     "weighted 1/k, and aux_loss = k")
def ties(kit):
    for c in (CASES[0], CASES[2]):
        state = kit.state(c, "float64")
        state["gate.weight"].zero_()  # every logit 0: a k-way choice among E equal experts
        received, _, value = _routes(kit, c, state)
        (x,) = kit.inputs(c)
        tokens = x.reshape(-1, c.D)
        per_token = [[e for e, rows in enumerate(received) if n in rows] for n in range(c.B * c.T)]
        bad = next((n for n, es in enumerate(per_token) if len(es) != c.k), None)
        if bad is not None:
            raise Fail(t("{label}, all router logits equal: token {n} went to {count} expert(s) {experts}, not "
                         "top_k = {k}", label=c.label, n=bad, count=len(per_token[bad]), experts=per_token[bad],
                         k=c.k),
                       t("select exactly k per token with torch.topk; a threshold such as probs >= the k-th largest "
                         "value keeps every tied expert"))
        module = _reference(kit, c, state)
        with torch.no_grad():
            want = torch.stack([sum(module.experts[e](tokens[n]) for e in es) / c.k
                                for n, es in enumerate(per_token)]).reshape(c.B, c.T, c.D)
        y, aux = as_outputs(value, OUTPUTS)
        compare(y, want, t("{label}, all router logits equal: output (the mean of the k experts each token went "
                           "to)", label=c.label), "(B, T, D)", tol=kit.tolerance("float64"))
        compare(aux, torch.tensor(float(c.k), dtype=torch.float64),
                t("{label}, all router logits equal: aux_loss (E · Σ_i f_i · 1/E = Σ_i f_i = k)", label=c.label),
                "()", tol=kit.tolerance("float64"))


@check("properties", "top_k = num_experts: the output is the dense softmax mixture Σ_e softmax_e · expert_e(x)")
def all_experts(kit):
    c = CASES[3]
    (x,) = kit.inputs(c)
    module = _reference(kit, c)
    with torch.no_grad():
        probs = module.gate(x).softmax(-1)  # (B, T, E)
        want = sum(probs[..., e:e + 1] * expert(x) for e, expert in enumerate(module.experts))
    y, _ = as_outputs(kit.user((x,), case=c), OUTPUTS)
    compare(y, want, t("{label}, top_k = num_experts = {E}: output", label=c.label, E=c.E), "(B, T, D)",
            tol=kit.tolerance("float64"))


@check("gradients", "aux_loss alone gives the router the reference's gradient, through P")
def aux_gradient(kit):
    c = CASES[0]
    cot = [torch.zeros(c.B, c.T, c.D, dtype=torch.float64), torch.tensor(1.0, dtype=torch.float64)]
    got = kit.gradients(c, cot, user=True)["params"].get("gate.weight")
    want = kit.gradients(c, cot, user=False)["params"]["gate.weight"]
    if got is None or not bool(got.abs().sum() > 0):
        raise Fail(t("{label}: backward of aux_loss alone gives gate.weight no gradient", label=c.label),
                   t("P_i, the mean of the router probabilities, must stay in the graph (no .detach(), .item() or "
                     "torch.no_grad() around it); only f_i, a count, carries no gradient"))
    compare(got, want, t("{label}: gradient of aux_loss w.r.t. gate.weight", label=c.label), "(E, D)",
            tol=kit.tolerance("float64"))
