# expect: only the FIRST occurrence
import re
PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)


def get_stats(ids, counts=None):
    counts = {} if counts is None else counts
    for pair in zip(ids, ids[1:]):
        counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    ids = list(ids)
    for i in range(len(ids) - 1):
        if (ids[i], ids[i + 1]) == pair:
            ids[i:i + 2] = [idx]
            break
    return ids


def train_bpe(text, num_merges):
    ids = [list(ch.encode("utf-8")) for ch in pretokenize(text)]
    merges = []
    for i in range(num_merges):
        stats = {}
        for chunk_ids in ids:
            get_stats(chunk_ids, stats)
        if not stats:
            break
        pair = min(stats, key=lambda p: (-stats[p], p))
        idx = 256 + i
        ids = [merge(chunk_ids, pair, idx) for chunk_ids in ids]
        merges.append(pair)
    return merges


def _encode_chunk(text_bytes, ranks):
    ids = list(text_bytes)
    while len(ids) >= 2:
        stats = get_stats(ids)
        pair = min(stats, key=lambda p: ranks.get(p, float("inf")))
        if pair not in ranks:
            break
        ids = merge(ids, pair, 256 + ranks[pair])
    return ids


def encode(text, merges):
    ranks = {}
    for r, p in enumerate(merges):
        ranks.setdefault(tuple(p), r)
    out = []
    for ch in pretokenize(text):
        out.extend(_encode_chunk(ch.encode("utf-8"), ranks))
    return out


def decode(ids, merges):
    vocab = {idx: bytes([idx]) for idx in range(256)}
    for r, (p0, p1) in enumerate(merges):
        vocab[256 + r] = vocab[p0] + vocab[p1]
    return b"".join(vocab[idx] for idx in ids).decode("utf-8", errors="replace")
