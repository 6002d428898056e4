import re
PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)

import heapq
from collections import Counter, defaultdict


def train_bpe(text, num_merges):
    # HF tokenizers' BpeTrainer: word counts, pair counts kept up to date, where-to-find index
    word_counts = Counter(pretokenize(text))
    words = [list(w.encode("utf-8")) for w in word_counts]
    counts = [word_counts[w] for w in word_counts]
    pair_counts = defaultdict(int)
    where = defaultdict(set)
    for wi, w in enumerate(words):
        for a, b in zip(w, w[1:]):
            pair_counts[(a, b)] += counts[wi]
            where[(a, b)].add(wi)
    merges = []
    for r in range(num_merges):
        live = [p for p, c in pair_counts.items() if c > 0]
        if not live:
            break
        best = min(live, key=lambda p: (-pair_counts[p], p))
        new_id = 256 + r
        merges.append(best)
        for wi in list(where[best]):
            w = words[wi]
            c = counts[wi]
            for a, b in zip(w, w[1:]):
                pair_counts[(a, b)] -= c
            out, i = [], 0
            while i < len(w):
                if i + 1 < len(w) and w[i] == best[0] and w[i + 1] == best[1]:
                    out.append(new_id)
                    i += 2
                else:
                    out.append(w[i])
                    i += 1
            words[wi] = out
            for a, b in zip(out, out[1:]):
                pair_counts[(a, b)] += c
                where[(a, b)].add(wi)
        where.pop(best, None)
    return merges


def encode(text, merges):
    # HF's word.merge_all: a priority queue on (rank, position), one merge at a time
    ranks = {}
    for r, p in enumerate(merges):
        if tuple(p) not in ranks:
            ranks[tuple(p)] = r
    out = []
    for chunk in pretokenize(text):
        syms = list(chunk.encode("utf-8"))
        while True:
            best = None
            for i in range(len(syms) - 1):
                r = ranks.get((syms[i], syms[i + 1]))
                if r is not None and (best is None or r < best[0]):
                    best = (r, i)
            if best is None:
                break
            r, i = best
            syms[i:i + 2] = [256 + r]
        out.extend(syms)
    return out


def decode(ids, merges):
    table = [bytes([b]) for b in range(256)]
    for a, b in merges:
        table.append(table[a] + table[b])
    return b"".join(table[i] for i in ids).decode("utf-8", errors="replace")
