"""A scalar bucket per offset with math.log over relative_position.tolist(): data-dependent, cannot run on the meta device."""
# scalar bucket per distance with math.log, like many blog posts; a lookup table over distances
import math

import torch


def _bucket(rp, bidirectional, num_buckets, max_distance):
    ret = 0
    if bidirectional:
        num_buckets //= 2
        if rp > 0:
            ret += num_buckets
        n = abs(rp)
    else:
        n = max(-rp, 0)
    max_exact = num_buckets // 2
    if n < max_exact:
        return ret + n
    val = max_exact + int(math.log(n / max_exact) / math.log(max_distance / max_exact) * (num_buckets - max_exact))
    return ret + min(val, num_buckets - 1)


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    flat = [_bucket(int(r), bidirectional, num_buckets, max_distance) for r in relative_position.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=torch.long, device=relative_position.device).reshape(relative_position.shape)


def relative_position_bias(weight, T_q, T_k, bidirectional=True, max_distance=128):
    ctx = torch.arange(T_k - T_q, T_k, device=weight.device)[:, None]
    mem = torch.arange(T_k, device=weight.device)[None, :]
    buckets = relative_position_bucket(mem - ctx, bidirectional, weight.size(0), max_distance)
    return weight[buckets].permute(2, 0, 1).unsqueeze(0).contiguous()
