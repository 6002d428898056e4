"""Encode by applying every merge once, in rank order, over the whole chunk (merge r can only use tokens made
before it, so one pass each is enough); decode by expanding ids recursively; ties by sorting."""
import re
from collections import Counter
from functools import lru_cache

PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)


def _replace(seq, pair, new):
    out, i = [], 0
    while i < len(seq):
        if seq[i:i + 2] == list(pair):
            out.append(new)
            i += 2
        else:
            out.append(seq[i])
            i += 1
    return out


def train_bpe(text, num_merges):
    vocab = Counter(tuple(chunk.encode("utf-8")) for chunk in pretokenize(text))
    words = [(list(w), f) for w, f in vocab.items()]
    merges = []
    while len(merges) < num_merges:
        counts = Counter()
        for w, f in words:
            for i in range(len(w) - 1):
                counts[w[i], w[i + 1]] += f
        if not counts:
            break
        best = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]
        words = [(_replace(w, best, 256 + len(merges)), f) for w, f in words]
        merges.append(best)
    return merges


def encode(text, merges):
    ids = []
    for chunk in pretokenize(text):
        seq = list(chunk.encode("utf-8"))
        for r, pair in enumerate(merges):
            seq = _replace(seq, pair, 256 + r)
        ids += seq
    return ids


def decode(ids, merges):
    merges = tuple(tuple(p) for p in merges)

    @lru_cache(maxsize=None)
    def expand(i):
        if i < 256:
            return bytes([i])
        a, b = merges[i - 256]
        return expand(a) + expand(b)

    return bytes().join(expand(i) for i in ids).decode("utf-8", "replace")
