# expect: WordPiece's greedy longest match
"""Trains right, but encodes by the longest vocabulary entry (greedy maximal munch)."""
import re
from collections import Counter

PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)


def _merge(ids, pair, idx):
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(idx)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(text, num_merges):
    words = Counter(tuple(c.encode("utf-8")) for c in pretokenize(text))
    merges = []
    for r in range(num_merges):
        counts = Counter()
        for w, f in words.items():
            for p in zip(w, w[1:]):
                counts[p] += f
        if not counts:
            break
        pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        words = Counter({tuple(_merge(list(w), pair, 256 + r)): f for w, f in words.items()})
    return merges


def _vocab(merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for r, (a, b) in enumerate(merges):
        vocab[256 + r] = vocab[a] + vocab[b]
    return vocab


def encode(text, merges):
    token_of = {}
    for i, b in _vocab(merges).items():
        token_of.setdefault(b, i)
    out = []
    for chunk in pretokenize(text):
        data, i = chunk.encode("utf-8"), 0
        while i < len(data):
            j = len(data)
            while data[i:j] not in token_of:
                j -= 1
            out.append(token_of[data[i:j]])
            i = j
    return out


def decode(ids, merges):
    vocab = _vocab(merges)
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
