"""GPTQ's quantizer (IST-DASLab/gptq, quant.py: Quantizer.find_params with weight=True, perchannel=True, sym=False,
maxq = 2**4 - 1, and quantize()), applied group by group as gptq.py's fasterquant does with groupsize, re-typed; the
levels packed as AutoGPTQ's QuantLinear.pack does (qweight |= intweight[j] << (bits * (j - row)): the first value in
the lowest bits), here into bytes; dequantised as AutoGPTQ does, scale * (q - zero)."""
import torch

maxq = 2 ** 4 - 1


def find_params(x):
    tmp = torch.zeros(x.shape[0], dtype=x.dtype)
    xmin = torch.minimum(x.min(1)[0], tmp)
    xmax = torch.maximum(x.max(1)[0], tmp)
    tmp = (xmin == 0) & (xmax == 0)
    xmin[tmp] = -1
    xmax[tmp] = +1
    scale = (xmax - xmin) / maxq
    zero = torch.round(-xmin / scale)
    return scale.unsqueeze(1), zero.unsqueeze(1)


def quantize(x, scale, zero):
    return torch.clamp(torch.round(x / scale) + zero, 0, maxq)


def quantize_int4(W, group_size=128):
    rows, columns = W.shape
    if columns % group_size != 0:
        raise ValueError("groupsize must divide the columns")
    q = torch.zeros(rows, columns, dtype=torch.uint8)
    scales, zeros = [], []
    for i in range(0, columns, group_size):
        scale, zero = find_params(W[:, i:i + group_size])
        q[:, i:i + group_size] = quantize(W[:, i:i + group_size], scale, zero).to(torch.uint8)
        scales.append(scale)
        zeros.append(zero)
    return q, torch.cat(scales, dim=1), torch.cat(zeros, dim=1)


def pack_int4(q):
    bits = 4
    if q.shape[1] % (8 // bits) != 0:
        raise ValueError("the columns must fill whole bytes")
    intweight = q.to(torch.int32).t()
    qweight = torch.zeros(intweight.shape[0] // (8 // bits), intweight.shape[1], dtype=torch.int32)
    i = row = 0
    while row < qweight.shape[0]:
        for j in range(i, i + (8 // bits)):
            qweight[row] |= intweight[j] << (bits * (j - i))
        i += 8 // bits
        row += 1
    return qweight.t().to(torch.uint8)


def unpack_int4(packed):
    wf = torch.tensor([0, 4], dtype=torch.int32)  # AutoGPTQ's shifts, one per value in the word
    weight = torch.bitwise_right_shift(packed.to(torch.int32).unsqueeze(2), wf.view(1, 1, -1))
    weight = torch.bitwise_and(weight, 2 ** 4 - 1)
    return weight.reshape(packed.shape[0], -1).to(torch.uint8)


def dequantize_int4(q, scale, zero, group_size=128):
    if q.shape[1] % group_size != 0:
        raise ValueError("groupsize must divide the columns")
    g_idx = torch.arange(q.shape[1]) // group_size  # AutoGPTQ's g_idx: the group of each input column
    return scale[:, g_idx] * (q.to(scale.dtype) - zero[:, g_idx])
