# expect: each distinct chunk once
"""Counts each distinct word once."""
import re

PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)


def get_stats(chunks):
    counts = {}
    for ids in chunks:
        for pair in zip(ids, ids[1:]):
            counts[pair] = counts.get(pair, 0) + 1
    return counts


def merge(ids, pair, idx):
    newids = []
    i = 0
    while i < len(ids):
        if i < len(ids) - 1 and ids[i] == pair[0] and ids[i + 1] == pair[1]:
            newids.append(idx)
            i += 2
        else:
            newids.append(ids[i])
            i += 1
    return newids


def train_bpe(text, num_merges):
    chunks = [list(ch.encode("utf-8")) for ch in dict.fromkeys(pretokenize(text))]
    merges = []
    for i in range(num_merges):
        stats = get_stats(chunks)
        if not stats:
            break
        pair = min(stats, key=lambda p: (-stats[p], p))
        merges.append(pair)
        chunks = [merge(ids, pair, 256 + i) for ids in chunks]
    return merges


def encode(text, merges):
    ranks = {tuple(p): r for r, p in enumerate(merges)}
    out = []
    for ch in pretokenize(text):
        ids = list(ch.encode("utf-8"))
        while len(ids) >= 2:
            stats = get_stats([ids])
            pair = min(stats, key=lambda p: ranks.get(p, float("inf")))
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
