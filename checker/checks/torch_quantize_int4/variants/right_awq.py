# followup: AWQ's reading
"""llm-awq's pseudo_quantize_tensor (awq/quantize/quantizer.py, zero_point=True, n_bit=4, q_group_size), re-typed:
the group's own [min, max] (not stretched to hold 0), scales clamped to 1e-5, zeros = -round(min / scales) clamped to
[0, 15]. A group of zeros gets the contract's GPTQ range [-1, 1] (the adaptation); the bytes are packed the contract's
way (AWQ's GEMM kernels interleave eight values per int32 in the order 0, 2, 4, 6, 1, 3, 5, 7)."""
import torch


def quantize_int4(W, group_size=128):
    org_shape = W.shape
    if org_shape[-1] % group_size != 0:
        raise ValueError("q_group_size must divide the columns")
    w = W.reshape(-1, group_size)
    max_val = w.amax(dim=1, keepdim=True)
    min_val = w.amin(dim=1, keepdim=True)
    empty = (max_val == 0) & (min_val == 0)
    max_val, min_val = torch.where(empty, 1.0, max_val), torch.where(empty, -1.0, min_val)
    max_int, min_int = 2 ** 4 - 1, 0
    scales = (max_val - min_val).clamp(min=1e-5) / max_int
    zeros = (-torch.round(min_val / scales)).clamp_(min_int, max_int)
    q = torch.clamp(torch.round(w / scales) + zeros, min_int, max_int)
    G = org_shape[-1] // group_size
    return q.reshape(org_shape).to(torch.uint8), scales.view(-1, G), zeros.view(-1, G)


def pack_int4(q):
    if q.shape[1] % 2:
        raise ValueError("an odd number of columns")
    return q[:, 0::2] + q[:, 1::2] * 16


def unpack_int4(packed):
    return torch.stack((packed % 16, packed // 16), dim=-1).reshape(packed.shape[0], -1)


def dequantize_int4(q, scale, zero, group_size=128):
    if q.shape[1] % group_size:
        raise ValueError("q_group_size must divide the columns")
    w = q.reshape(-1, group_size).to(scale.dtype)
    return ((w - zero.reshape(-1, 1)) * scale.reshape(-1, 1)).reshape(q.shape)
