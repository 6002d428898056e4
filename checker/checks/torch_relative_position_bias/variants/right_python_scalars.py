"""One relative position at a time in plain Python (math.log in float64), then a gather per head."""
import math

import torch


def _bucket(rp, bidirectional, num_buckets, max_distance):
    offset = 0
    if bidirectional:
        num_buckets = num_buckets // 2
        if rp > 0:
            offset = num_buckets
        distance = abs(rp)
    else:
        distance = max(-rp, 0)
    max_exact = num_buckets // 2
    if distance < max_exact:
        return offset + distance
    large = max_exact + int(math.log(distance / max_exact) / math.log(max_distance / max_exact)
                            * (num_buckets - max_exact))
    return offset + min(large, num_buckets - 1)


def relative_position_bucket(relative_position, bidirectional=True, num_buckets=32, max_distance=128):
    flat = [_bucket(int(rp), bidirectional, num_buckets, max_distance) for rp in relative_position.reshape(-1).tolist()]
    return torch.tensor(flat, dtype=torch.long, device=relative_position.device).reshape(relative_position.shape)


def relative_position_bias(weight, T_q, T_k, bidirectional=True, max_distance=128):
    H = weight.shape[1]
    start = T_k - T_q
    rel = torch.tensor([[j - (start + i) for j in range(T_k)] for i in range(T_q)], dtype=torch.long)
    idx = relative_position_bucket(rel, bidirectional, weight.shape[0], max_distance).to(weight.device)
    return torch.stack([weight[:, h][idx] for h in range(H)]).unsqueeze(0)
