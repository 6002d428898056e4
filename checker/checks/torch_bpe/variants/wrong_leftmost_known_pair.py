# expect: first difference at position
"""encode merges the leftmost pair the merges know, again and again, instead of the lowest-ranked one: on most texts
it agrees with longest match and with merging by frequency, so no named mistake may be said for it."""
import math
import re
from collections import Counter

PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text: str) -> list[str]:
    """'hello  world' -> ['hello', ' ', ' world']: the chunks BPE works inside."""
    return PATTERN.findall(text)


def _merge(ids: list[int], pair: tuple[int, int], new_id: int) -> list[int]:
    """Replace pair by new_id left to right, without overlap: [a, a, a] -> [X, a]."""
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair:
            out.append(new_id)
            i += 2
        else:
            out.append(ids[i])
            i += 1
    return out


def train_bpe(text: str, num_merges: int) -> list[tuple[int, int]]:
    """Most frequent pair inside chunks, num_merges times (ties: smallest pair); stops when no pair is left."""
    # 1) each distinct chunk once, as its bytes, with how often it occurs
    words = Counter(tuple(chunk.encode("utf-8")) for chunk in pretokenize(text))
    merges = []
    for rank in range(num_merges):
        # 2) count every adjacent pair inside the chunks, weighted by the chunk's frequency
        counts = Counter()
        for word, freq in words.items():
            for pair in zip(word, word[1:]):  # overlapping: (a, a, a) holds (a, a) twice
                counts[pair] += freq
        if not counts:
            break  # every chunk is one token
        # 3) the most frequent pair; among equals the smallest (left, right)
        pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        # 4) merge it everywhere: it becomes token 256 + rank
        new_words = Counter()
        for word, freq in words.items():
            new_words[tuple(_merge(list(word), pair, 256 + rank))] += freq
        words = new_words
    return merges


def encode(text: str, merges: list[tuple[int, int]]) -> list[int]:
    """Per chunk: bytes, then the lowest-ranked merge present, again and again."""
    ranks = {pair: rank for rank, pair in enumerate(merges)}
    ids = []
    for chunk in pretokenize(text):
        tokens = list(chunk.encode("utf-8"))
        while len(tokens) >= 2:
            known = [p for p in zip(tokens, tokens[1:]) if p in ranks]
            if not known:
                break
            pair = known[0]  # the leftmost pair the merges know
            tokens = _merge(tokens, pair, 256 + ranks[pair])
        ids.extend(tokens)
    return ids


def decode(ids: list[int], merges: list[tuple[int, int]]) -> str:
    """Bytes of every id, joined, then UTF-8 once (errors='replace')."""
    vocab = {i: bytes([i]) for i in range(256)}
    for rank, (left, right) in enumerate(merges):
        vocab[256 + rank] = vocab[left] + vocab[right]
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors="replace")
