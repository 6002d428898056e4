"""Scans positions for the lowest-ranked pair and merges it, as the GPT-2 encoder's bpe() loop does (on ids
here); trains with a heap-free max over (count, negated pair); decodes into a bytearray."""
import re

PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)


def _apply(word, pair, new_id):
    first, second = pair
    new_word, i = [], 0
    while i < len(word):
        try:
            j = word.index(first, i)
        except ValueError:
            new_word.extend(word[i:])
            break
        new_word.extend(word[i:j])
        i = j
        if word[i] == first and i < len(word) - 1 and word[i + 1] == second:
            new_word.append(new_id)
            i += 2
        else:
            new_word.append(word[i])
            i += 1
    return new_word


def train_bpe(text, num_merges):
    freq = {}
    for chunk in pretokenize(text):
        key = tuple(chunk.encode("utf-8"))
        freq[key] = freq.get(key, 0) + 1
    merges = []
    for r in range(num_merges):
        counts = {}
        for word, f in freq.items():
            for a, b in zip(word, word[1:]):
                counts[(a, b)] = counts.get((a, b), 0) + f
        if len(counts) == 0:
            break
        best = max(counts, key=lambda p: (counts[p], -p[0], -p[1]))
        merges.append(best)
        freq2 = {}
        for word, f in freq.items():
            key = tuple(_apply(list(word), best, 256 + r))
            freq2[key] = freq2.get(key, 0) + f
        freq = freq2
    return merges


def encode(text, merges):
    bpe_ranks = {tuple(p): r for r, p in enumerate(merges)}
    result = []
    for chunk in pretokenize(text):
        word = list(chunk.encode("utf-8"))
        while len(word) > 1:
            pairs = set(zip(word, word[1:]))
            bigram = min(pairs, key=lambda p: bpe_ranks.get(p, float("inf")))
            if bigram not in bpe_ranks:
                break
            word = _apply(word, bigram, 256 + bpe_ranks[bigram])
        result.extend(word)
    return result


def decode(ids, merges):
    pieces = [bytes([i]) for i in range(256)]
    for a, b in merges:
        pieces.append(pieces[a] + pieces[b])
    out = bytearray()
    for i in ids:
        out += pieces[i]
    return out.decode("utf-8", errors="replace")
