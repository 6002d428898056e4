# expect: your merge replaces text, not ids
"""Merges by string replacement over the ids joined as text, which also fuses digits of neighbouring ids."""
import re
from collections import Counter

PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)


def merge(ids, pair, new_id):
    # "104 101 108" -> replace "104 101" by "256" -> "256 108"
    text = " ".join(map(str, ids)).replace(f"{pair[0]} {pair[1]}", str(new_id))
    return [int(x) for x in text.split()]


def train_bpe(text, num_merges):
    chunks = [list(ch.encode("utf-8")) for ch in pretokenize(text)]
    merges = []
    for r in range(num_merges):
        counts = Counter()
        for ids in chunks:
            counts.update(zip(ids, ids[1:]))
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        chunks = [merge(ids, pair, 256 + r) for ids in chunks]
    return merges


def encode(text, merges):
    ranks = {tuple(p): r for r, p in enumerate(merges)}
    out = []
    for ch in pretokenize(text):
        ids = list(ch.encode("utf-8"))
        while len(ids) >= 2:
            pair = min(zip(ids, ids[1:]), key=lambda p: ranks.get(p, float("inf")))
            if pair not in ranks:
                break
            ids = merge(ids, pair, 256 + ranks[pair])
        out.extend(ids)
    return out


def decode(ids, merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for r, (a, b) in enumerate(merges):
        vocab[256 + r] = vocab[a] + vocab[b]
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
