"""bitsandbytes' pure-PyTorch kernels (bitsandbytes/backends/default/ops.py: int8_vectorwise_quant,
int8_vectorwise_dequant, int8_linear_matmul, int8_mm_dequant), re-typed and adapted to the contract: bitsandbytes
keeps the row statistic absmax (its SCB) and multiplies by 127 / absmax; the contract's scale is absmax / 127, and a
row of zeros gets scale 1 where bitsandbytes would divide by 0."""
import torch


def quantize_int8(W):
    row_stats = torch.max(W.abs(), dim=1).values  # (N,) absmax per row
    row_stats = torch.where(row_stats == 0, torch.full_like(row_stats, 127.0), row_stats)
    out_row = torch.round(W * (127.0 / row_stats.unsqueeze(-1))).to(torch.int8)
    return out_row, (row_stats / 127.0).unsqueeze(-1)


def dequantize_int8(q, scale):
    # int8_vectorwise_dequant: A * stats.view(-1, 1) * 7.874015718698502e-5 (1 / 127), with stats = 127 · scale
    return q * scale.view(-1, 1)


def int8_matmul(qx, sx, qw, sw):
    # int8_linear_matmul: the int32 product; int8_mm_dequant: times row_stats · col_stats / 127²
    acc = torch.matmul(qx.int(), qw.t().int())
    row_stats, col_stats = sx.view(-1) * 127.0, sw.view(-1) * 127.0
    return acc * (row_stats.view(-1, 1) * col_stats.view(1, -1)) * (1.0 / (127.0 * 127.0))
