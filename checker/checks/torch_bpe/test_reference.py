"""The reference BPE equals an independent implementation: Sennrich et al. (2016)'s Algorithm 1 on
space-separated symbols with regex replacement (adapted to bytes and to the contract's tie rule), an
encoder that applies each merge in rank order in one pass, and a decoder that expands ids recursively.
Also the premises of the checks: the ties, "aaa" and the Chinese byte split really decide the answers."""

import re
from collections import Counter

import pytest

from checker import catalogue, engine
from checker.checks.torch_bpe import checks as spec

solution = engine.load_solution(catalogue.find("bpe"))
CORPORA = [(text, n) for _, text, n in spec._CORPORA] + spec._TIES + [spec._AAA, spec._EARLY, ("xa xa xa", 3),
                                                                    spec._LONG_RUN[1:]]


def sennrich(text, num_merges):
    """Words as space-separated symbols (ids as text); merge the best bigram with a regex, as in the paper."""
    vocab = Counter(" ".join(str(b) for b in chunk.encode("utf-8")) for chunk in solution.pretokenize(text))
    merges = []
    for rank in range(num_merges):
        pairs = Counter()
        for word, freq in vocab.items():
            symbols = word.split()
            for i in range(len(symbols) - 1):
                pairs[int(symbols[i]), int(symbols[i + 1])] += freq
        if not pairs:
            break
        top = max(pairs.values())
        best = min(p for p, c in pairs.items() if c == top)  # the contract's tie rule
        merges.append(best)
        bigram = re.escape(f"{best[0]} {best[1]}")
        pattern = re.compile(r"(?<!\S)" + bigram + r"(?!\S)")
        vocab = Counter({pattern.sub(str(256 + rank), word): freq for word, freq in vocab.items()})
    return merges


def encode_by_passes(text, merges):
    ids = []
    for chunk in solution.pretokenize(text):
        tokens = list(chunk.encode("utf-8"))
        for rank, pair in enumerate(merges):  # merge r can only be made from tokens < 256 + r: one pass each
            out, i = [], 0
            while i < len(tokens):
                if tuple(tokens[i:i + 2]) == pair:
                    out.append(256 + rank)
                    i += 2
                else:
                    out.append(tokens[i])
                    i += 1
            tokens = out
        ids += tokens
    return ids


def expand(i, merges):
    return bytes([i]) if i < 256 else expand(merges[i - 256][0], merges) + expand(merges[i - 256][1], merges)


@pytest.mark.parametrize("text, n", CORPORA, ids=lambda x: repr(x)[:20] if isinstance(x, str) else str(x))
def test_merges_equal_sennrich_algorithm(text, n):
    assert solution.train_bpe(text, n) == sennrich(text, n)


@pytest.mark.parametrize("corpus, n", [(text, n) for _, text, n in spec._CORPORA])
def test_encode_and_decode_equal_independent_ones(corpus, n):
    merges = solution.train_bpe(corpus, n)
    for text in spec._TEXTS + [s for _, s in spec._ROUND]:
        ids = solution.encode(text, merges)
        assert ids == encode_by_passes(text, merges)
        assert solution.decode(ids, merges) == b"".join(expand(i, merges) for i in ids).decode("utf-8", "replace")
        assert solution.decode(ids, merges) == text


def test_hand_made_merges_encode_like_the_independent_encoder():
    for _, merges, text in spec._HAND + spec._DIGITS:
        assert solution.encode(text, merges) == encode_by_passes(text, merges)


def test_the_tie_corpora_decide_between_tie_rules():
    for text, n in spec._TIES:
        first_seen = spec._train(text, n, tie="first")
        assert solution.train_bpe(text, n) != first_seen


def test_aaa_counts_overlapping_and_merges_without_overlap():
    text, n = spec._AAA
    merges = solution.train_bpe(text, n)
    assert merges[0] == (97, 97)  # counted 6 times against (x, y)'s 4
    assert solution.encode("aaa", merges[:1]) == [256, 97]


def test_a_token_holds_part_of_a_chinese_character():
    """The premise of the decode check: decoding token by token breaks Chinese text."""
    merges = solution.train_bpe(spec._CHINESE, 60)

    def valid(b):
        try:
            b.decode("utf-8")
            return True
        except UnicodeDecodeError:
            return False

    assert any(not valid(expand(256 + r, merges)) for r in range(len(merges)))
    text = "注意力的参数量是多少？手撕 Transformer。"
    ids = solution.encode(text, merges)
    assert "".join(expand(i, merges).decode("utf-8", "replace") for i in ids) != text


def test_early_stop_and_invalid_bytes():
    assert solution.train_bpe(*spec._EARLY) == [(97, 98), (32, 256)]
    assert solution.decode([0xE4, 0xBD], []) == "\ufffd"
    assert solution.decode([104, 105, 255], []) == "hi\ufffd"


def test_the_long_run_reaches_ids_whose_text_overlaps():
    """The premise of the long-run check: merged as text, the ids of three digits fuse with their neighbours."""
    _, text, n = spec._LONG_RUN
    merges = solution.train_bpe(text, n)
    assert len(merges) < n and 256 + len(merges) > 400  # merged to the end: every chunk is one token
    assert spec._train(text, n, as_text=True) != merges
    for _, hand, s in spec._DIGITS:
        assert spec._encode(s, hand, as_text=True) != solution.encode(s, hand)
