import re
PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text):
    return PATTERN.findall(text)

import collections


def get_stats(vocab):
    pairs = collections.defaultdict(int)
    for word, freq in vocab.items():
        for i in range(len(word) - 1):
            pairs[word[i], word[i + 1]] += freq
    return pairs


def merge_vocab(pair, new_id, v_in):
    v_out = {}
    for word, freq in v_in.items():
        out = []
        i = 0
        while i < len(word):
            if i + 1 < len(word) and (word[i], word[i + 1]) == pair:
                out.append(new_id)
                i += 2
            else:
                out.append(word[i])
                i += 1
        out = tuple(out)
        v_out[out] = v_out.get(out, 0) + freq
    return v_out


def train_bpe(text, num_merges):
    vocab = collections.Counter(tuple(w.encode("utf-8")) for w in pretokenize(text))
    merges = []
    for i in range(num_merges):
        pairs = get_stats(vocab)
        if not pairs:
            break
        best = max(pairs, key=lambda p: (pairs[p], -p[0], -p[1]))
        vocab = merge_vocab(best, 256 + i, vocab)
        merges.append(best)
    return merges


def encode(text, merges):
    out = []
    for w in pretokenize(text):
        word = tuple(w.encode("utf-8"))
        for r, pair in enumerate(merges):
            if len(word) < 2:
                break
            word = tuple(next(iter(merge_vocab(pair, 256 + r, {word: 1}))))
        out += list(word)
    return out


def decode(ids, merges):
    def expand(i):
        if i < 256:
            return bytes([i])
        a, b = merges[i - 256]
        return expand(a) + expand(b)
    return b"".join(expand(i) for i in ids).decode("utf-8", "replace")
