"""The reference equals GPTQ's quantizer (IST-DASLab/gptq, quant.py: Quantizer.find_params(x, weight=True) with
perchannel=True, sym=False, maxq=15, and quantize(x, scale, zero, maxq)) applied to each group of columns, re-typed
here; its packing equals AutoGPTQ's QuantLinear.pack loop (qweight |= intweight[j] << (bits * (j - i))) on bytes; and
on groups that hold both signs it equals llm-awq's pseudo_quantize_tensor, the contract's other reading."""

import pytest
import torch

from checker import catalogue, engine
from checker.checks.torch_quantize_int4 import checks as spec

solution = engine.load_solution(catalogue.find("quantize_int4"))
MAXQ = 15


def gptq_find_params(x):
    tmp = torch.zeros(x.shape[0], dtype=x.dtype)
    xmin = torch.minimum(x.min(1)[0], tmp)
    xmax = torch.maximum(x.max(1)[0], tmp)
    tmp = (xmin == 0) & (xmax == 0)
    xmin[tmp] = -1
    xmax[tmp] = +1
    scale = (xmax - xmin) / MAXQ
    zero = torch.round(-xmin / scale)
    return scale.unsqueeze(1), zero.unsqueeze(1)


def gptq_quantize(x, scale, zero):
    return torch.clamp(torch.round(x / scale) + zero, 0, MAXQ)


def autogptq_pack_bytes(q):
    intweight = q.to(torch.int32).t().contiguous()
    qweight = torch.zeros(intweight.shape[0] // 2, intweight.shape[1], dtype=torch.int32)
    i = row = 0
    while row < qweight.shape[0]:
        for j in range(i, i + 2):
            qweight[row] |= intweight[j] << (4 * (j - i))
        i += 2
        row += 1
    return qweight.t().to(torch.uint8)


def _zero_groups(W, group_size):
    W = W.clone()
    W[0, :group_size] = 0.0
    return W


@pytest.mark.parametrize("c", [*spec.CASES, spec.TIMING], ids=lambda c: c.label)
@pytest.mark.parametrize("dtype", ["float64", "float32"])
def test_quantize_equals_gptq_group_by_group(c, dtype):
    W, group_size = spec.inputs(c, dtype)
    W = _zero_groups(W, group_size)
    q, scale, zero = solution.quantize_int4(W, group_size)
    for g, i in enumerate(range(0, c.K, group_size)):
        s, z = gptq_find_params(W[:, i:i + group_size])
        torch.testing.assert_close(scale[:, g:g + 1], s, rtol=0, atol=0)
        torch.testing.assert_close(zero[:, g:g + 1], z, rtol=0, atol=0)
        assert torch.equal(q[:, i:i + group_size], gptq_quantize(W[:, i:i + group_size], s, z).to(torch.uint8))
    back = solution.dequantize_int4(q, scale, zero, group_size)
    want = (scale.repeat_interleave(group_size, 1) * (q.to(W.dtype) - zero.repeat_interleave(group_size, 1)))
    torch.testing.assert_close(back, want)  # GPTQ's dequantisation: scale * (q - zero)


@pytest.mark.parametrize("c", spec._PACK_CASES, ids=lambda c: c.label)
def test_packing_equals_autogptq_and_unpacks(c):
    (q,) = spec._pack_inputs(c)
    packed = solution.pack_int4(q)
    assert packed.dtype == torch.uint8 and torch.equal(packed, autogptq_pack_bytes(q))
    assert torch.equal(solution.unpack_int4(packed), q)
    assert packed[0, 0].item() == q[0, 0].item() + 16 * q[0, 1].item()  # column 0 low, column 1 high


def test_mixed_sign_groups_equal_awq():
    """Where every group holds both signs, stretching the range to 0 changes nothing: GPTQ = AWQ."""
    W, group_size = spec.inputs(spec.CASES[0], "float64")
    mine, theirs = solution.quantize_int4(W, group_size), spec._awq(W, group_size)
    for a, b in zip(mine, theirs):
        torch.testing.assert_close(a, b, rtol=0, atol=0)


def test_ties_round_half_to_even_and_clamp_at_15():
    """Step 1/4, min -1.5 steps: zero = round(1.5) = 2; the max 13.5 steps gives round(13.5) + 2 = 16, clamped."""
    W = torch.tensor([[-0.375, 3.375, 0.125, 0.625]], dtype=torch.float64)  # -1.5, 13.5, 0.5, 2.5 steps
    q, scale, zero = solution.quantize_int4(W, 4)
    assert scale.item() == 0.25 and zero.item() == 2 and q.tolist() == [[0, 15, 2, 4]]
