"""LLM.int8() (Dettmers et al. 2022, §3.2 vector-wise quantisation), written row by row as the paper states it:
c_x = 127 / ||X_i||_∞, c_w = 127 / ||W_j||_∞, C = (X_i8 W_i8) / (c_x ⊗ c_w), with Python's round-half-even rule on
each element (the built-in round rounds ties to even too) and the sums in Python integers."""
import torch


def quantize_int8(W):
    N, K = W.shape
    q = torch.zeros(N, K, dtype=torch.int8)
    scale = torch.ones(N, 1, dtype=W.dtype)
    for n in range(N):
        m = max(abs(v) for v in W[n].tolist())
        if m == 0:
            continue
        scale[n, 0] = m / 127
        for k in range(K):
            q[n, k] = max(-127, min(127, round(W[n, k].item() / scale[n, 0].item())))
    return q, scale


def dequantize_int8(q, scale):
    return torch.einsum("nk,n->nk", q.to(scale.dtype), scale[:, 0])


def int8_matmul(qx, sx, qw, sw):
    T, N = qx.shape[0], qw.shape[0]
    out = torch.zeros(T, N, dtype=sx.dtype)
    xs, ws = qx.tolist(), qw.tolist()
    for t in range(T):
        for n in range(N):
            acc = sum(a * b for a, b in zip(xs[t], ws[n]))  # exact integer sum
            out[t, n] = acc * (sx[t, 0] * sw[n, 0])
    return out
