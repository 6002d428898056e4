"""Hidden checks: byte-level BPE, trained, encoded and decoded (pure Python: lists of ints, no tensors).

Merges and ids are compared exactly with the reference, on corpora in English, in Chinese (the interview tutorial's
own sentences) and mixed; small corpora built so that each rule of the contract decides the result:
ties between equally frequent pairs, "aaa" (overlapping counts, non-overlapping merges), chunk
boundaries, merge rank against frequency or longest match, decoding bytes before UTF-8, and a long run of
merges whose ids of three digits overlap when written as text.
A wrong result is named by the knobbed trainer, encoder and decoder below.
"""

import math
import re
from collections import Counter

from checker.kit import Fail, Mistake, UserError, case, check, describe, expect_structure
from checker.lang import t

TARGET = "train_bpe"

_PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")  # the stub's pretokenize (given, part of the contract)

# Corpora: (name, text, num_merges). Each its own size; Chinese from the interview tutorial's opening lines.
_ENGLISH = ("the cat sat on the mat; the cat ate the rat. that hat is the cat's hat, and the mat is flat. "
            "then the rat sat on that mat and the cat ran at the rat.")
_CHINESE = ("本教程面向算法工程师面试，目标是手撕 Transformer 时能在白板中快速、正确、可讲解地实现关键模块与完整骨架。"
            "面试中优先保证正确、清晰、注释完善、形状无误。多头注意力的参数量是四个投影，编码器层的参数量约为十二倍。"
            "注意力的复杂度是序列长度的平方，注意力权重的显存也是平方。")
_MIXED = ("Multi-Head Attention（MHA）与 Position-wise Feed Forward（FFN）：残差连接 + LayerNorm，"
          "位置编码（Positional Encoding），EncoderLayer / DecoderLayer，贪心解码（Greedy Decode）。\n\n"
          "  d_model = 512, d_ff = 2048; 注意力 attention, 注意力 attention!  ")
_CORPORA = [("English", _ENGLISH, 40), ("Chinese", _CHINESE, 60), ("mixed", _MIXED, 50)]
# Ties: every top pair occurs twice; first seen (122, 121) or (97, 98), smallest (32, 97) or (32, 122).
_TIES = [("zy zy ab ab", 3), ("ab ab zy zy", 4), ("ba ab ba ab", 3)]
# "aaa": (a, a) occurs 6 times when counted overlapping, 3 without; (x, y) 4 times. Merged, "aaa" is [aa, a].
_AAA = ("aaa aaa aaa xy xy xy xy", 4)
# Stops early: after (a, b) and (32, 256) every chunk is one token, whatever num_merges asks.
_EARLY = ("ab ab", 10)
# Texts to encode: none of them in a corpus; Chinese, emoji, whitespace runs, a word the merges never saw.
_TEXTS = ["the rat ate that flat hat.", "注意力的参数量是多少？手撕 Transformer。", "cat  \n\t mat 🙂 猫",
          "Attention（注意力）= softmax(QKᵀ/√d_k)V", "zzz aaaa the  the"]
# Hand-made merges for encode: rank order against frequency in the text, and a merge (e, ' ') that only a
# chunk boundary could use; (a, b) -> 256, (b, c) -> 257, (a, 257) -> 258 makes "abc" one vocabulary entry
# that BPE never reaches (longest match would).
_HAND = [
    ("rank, not frequency", [(98, 99), (97, 98)], "abc ab ab"),
    ("a merge across chunks", [(101, 32), (116, 104), (257, 101)], "the cat the hat"),
    ("rank, not longest match", [(97, 98), (98, 99), (97, 257)], "abc abc"),
]
# Beside _HAND, where a named way of encoding must give the user's ids too: (b, c) is the most frequent pair of
# "abcbc" and (a, b) the leftmost, so merging by frequency and merging the leftmost known pair part there.
_TELLS = [("the leftmost pair, not the most frequent", [(97, 98), (98, 99)], "abcbc")]
# Ids of several digits, whose text overlaps: merged to the end, the mixed corpus's merges run to id 421, and a
# merge such as (10, 10) ("\n\n") also matches inside "110 103" ("ng") once the ids are joined as text. By hand:
# (x, y) -> 256, then (8, 9) -> (56, 57) -> 257, where "256 57" ("xy" then "9") holds "56 57" as text.
_LONG_RUN = ("mixed", _MIXED, 200)
_DIGITS = [("digits of ids that overlap", [(120, 121), (56, 57)], "xy989 89")]
# ids to decode that are not valid UTF-8: half of 你 (e4 bd), a lone 0xFF, a continuation byte 0x80.
_INVALID = [[0xE4, 0xBD], [104, 105, 255], [0x80, 0x41]]
# Round trips: each text with the user's own merges learned on a corpus that shares characters with it.
_ROUND = [("Chinese", "你好，世界！注意力的参数量。"), ("mixed", "emoji 🙂🚀 and 中文 mixed\t\n  spaces  "),
          ("English", "  the cat\n\nsat  ")]


# One case, for timing only: training on the Chinese corpus.
CASES = [case(1, num_merges=60, corpus="Chinese")]


def inputs(c, dtype="float64"):
    return _CHINESE, c.num_merges


# ----------------------------------------------------------------------------- knobbed BPE (the named mistakes)


def _chunks(text, split=True):
    if split == "words":
        return text.split()  # the bug: text.split() drops the spaces, so no token starts with one
    return _PATTERN.findall(text) if split else [text]


def _merge(ids, pair, new_id, overlap=False, once=False, as_text=False):
    if as_text:  # the bug: the ids joined as text, where "1 23".replace("1 2", ...) also fuses digits of other ids
        return [int(x) for x in " ".join(map(str, ids)).replace(f"{pair[0]} {pair[1]}", str(new_id)).split()]
    out, i = [], 0
    while i < len(ids):
        if i + 1 < len(ids) and (ids[i], ids[i + 1]) == pair and not (once and new_id in out):  # once: the bug
            out.append(new_id)
            i += 1 if overlap else 2  # the bug: i += 1 reads the merged pair's right id again
        else:
            out.append(ids[i])
            i += 1
    return out


def _count(word, overlap_count=True):
    pairs = list(zip(word, word[1:]))
    if overlap_count:
        return Counter(pairs)
    counts = Counter()  # the bug: each pair counted as bytes.count counts, without overlap
    for pair in dict.fromkeys(pairs):
        i = 0
        while i + 1 < len(word):
            if (word[i], word[i + 1]) == pair:
                counts[pair] += 1
                i += 2
            else:
                i += 1
    return counts


def _train(text, num_merges, *, tie="smallest", split=True, weighted=True, overlap_count=True, overlap=False,
           min_count=1, first_id=256, once=False, as_text=False):
    words = Counter(tuple(c.encode("utf-8")) for c in _chunks(text, split))
    if not weighted:
        words = Counter({w: 1 for w in words})
    merges = []
    for rank in range(num_merges):
        counts = Counter()
        for word, freq in words.items():
            for pair, n in _count(word, overlap_count).items():
                counts[pair] += n * freq
        if not counts or max(counts.values()) < min_count:  # the bug with min_count=2: learn_bpe's min frequency
            break
        if tie == "first":
            pair = max(counts, key=counts.get)  # minbpe: the first pair counted among the most frequent
        elif tie == "largest":
            pair = max(counts, key=lambda p: (counts[p], p))
        else:
            pair = min(counts, key=lambda p: (-counts[p], p))
        merges.append(pair)
        new = Counter()
        for word, freq in words.items():
            new[tuple(_merge(list(word), pair, first_id + rank, overlap, once, as_text))] += freq
        words = new
    return merges


def _vocab(merges):
    vocab = {i: bytes([i]) for i in range(256)}
    for rank, (a, b) in enumerate(merges):
        vocab[256 + rank] = vocab[a] + vocab[b]
    return vocab


def _encode(text, merges, *, order="rank", split=True, overlap=False, as_text=False):
    ranks = {tuple(p): r for r, p in enumerate(merges)}
    chunks = [list(c.encode("utf-8")) for c in _chunks(text, split)]
    if order == "longest":
        by_bytes = {v: k for k, v in sorted(_vocab(merges).items(), reverse=True)}  # lowest id per byte string
        out = []
        for c in chunks:
            data, i = bytes(c), 0
            while i < len(data):
                j = max(j for j in range(i + 1, len(data) + 1) if data[i:j] in by_bytes)
                out.append(by_bytes[data[i:j]])
                i = j
        return out
    if order == "frequency":
        while True:
            counts = Counter(p for c in chunks for p in zip(c, c[1:]) if p in ranks)
            if not counts:
                break
            pair = min(counts, key=lambda p: (-counts[p], ranks[p]))
            chunks = [_merge(c, pair, 256 + ranks[pair], overlap) for c in chunks]
        return [i for c in chunks for i in c]
    out = []
    for tokens in chunks:
        while len(tokens) >= 2:
            pair = min(zip(tokens, tokens[1:]), key=lambda p: ranks.get(p, math.inf))
            if pair not in ranks:
                break
            tokens = _merge(tokens, pair, 256 + ranks[pair], overlap, as_text=as_text)
        out += tokens
    return out


def _decode(ids, merges, *, per_token=False, errors="replace"):
    vocab = _vocab(merges)
    if per_token:
        return "".join(vocab[i].decode("utf-8", errors="replace") for i in ids)
    return b"".join(vocab[i] for i in ids).decode("utf-8", errors=errors)


def train_ref(text, num_merges):
    return _train(text, num_merges)


def encode_ref(text, merges):
    return _encode(text, merges)


_NO_SPLIT = ("your pairs cross chunk boundaries: pretokenize(text) first and count (and merge) pairs INSIDE each "
             "chunk only, so that no token ever spans a word and the space or punctuation after it")
_AS_TEXT = ("your merge replaces text, not ids: in the ids joined as a string, '97 98' also matches inside "
            "'197 98' or '97 981', so digits of neighbouring ids are fused into ids that were never learned. Merge "
            "the list itself: scan it, and where ids[i] == pair[0] and ids[i + 1] == pair[1] append the new id and "
            "skip both")
_OVERLAP_MERGE = ("your merge overlaps: [a, a, a] with the merge (a, a) -> X gives [X, X, a] (bytes duplicated). "
                  "Replace left to right and skip both ids of a merged pair (i += 2): [X, a]")
_TRAIN_MISTAKES = [
    Mistake("ties broken by first occurrence", lambda text, n: _train(text, n, tie="first"),
            "your ties go to the pair counted first (max(stats, key=stats.get), as minbpe does): the contract breaks "
            "ties by the smallest pair, min(counts, key=lambda p: (-counts[p], p))"),
    Mistake("ties broken by the largest pair", lambda text, n: _train(text, n, tie="largest"),
            "your ties go to the LARGEST pair (max over (count, pair)): the contract breaks ties by the smallest "
            "(left id, right id), min(counts, key=lambda p: (-counts[p], p))"),
    Mistake("pairs across chunk boundaries", lambda text, n: _train(text, n, split=False), _NO_SPLIT),
    Mistake("chunk frequencies ignored", lambda text, n: _train(text, n, weighted=False),
            "your counts take each distinct chunk once: a chunk that occurs k times in the text adds its pairs k "
            "times (weight each word's pairs by its frequency)"),
    Mistake("non-overlapping counts", lambda text, n: _train(text, n, overlap_count=False),
            "your counts skip overlapping occurrences: [a, a, a] holds the pair (a, a) TWICE (positions 0-1 and "
            "1-2), as Sennrich et al. and minbpe count; count every adjacent position (zip(ids, ids[1:]))"),
    Mistake("overlapping merge", lambda text, n: _train(text, n, overlap=True), _OVERLAP_MERGE),
    Mistake("stops at a count of one", lambda text, n: _train(text, n, min_count=2),
            "your train_bpe stops when the most frequent pair occurs only once (a minimum frequency of 2, as "
            "learn_bpe's default): the contract stops only when no chunk has a pair left; a pair seen once is merged"),
    Mistake("token ids from 257", lambda text, n: _train(text, n, first_id=257),
            "your merged tokens are numbered from 257 (range(1, ...) or len(vocab) + 1): merge number r, counted from "
            "0, makes the token 256 + r, so the first merge is 256"),
    Mistake("first occurrence only", lambda text, n: _train(text, n, once=True),
            "your merge replaces only the FIRST occurrence of the pair in each chunk (a break after the first "
            "match): replace every occurrence, left to right, so a chunk with the pair twice gets the new id twice"),
    Mistake("merged as text", lambda text, n: _train(text, n, as_text=True), _AS_TEXT),
    Mistake("chunks from text.split()", lambda text, n: _train(text, n, split="words"),
            "your chunks come from text.split(), which drops the spaces: use the given pretokenize(text), whose "
            "chunks keep a word's leading space (' cat') and the runs of whitespace"),
]
_ENCODE_MISTAKES = [
    Mistake("merges by frequency in the text", lambda text, merges: _encode(text, merges, order="frequency"),
            "your encode merges the pair most frequent in the text first: merges apply in their LEARNED order, the "
            "lowest rank present in the chunk first (ranks = {pair: r}), whatever the text's counts"),
    Mistake("longest match", lambda text, merges: _encode(text, merges, order="longest"),
            "your encode takes the longest vocabulary entry that matches (WordPiece's greedy longest match): BPE "
            "replays the merges by rank, and may end with shorter tokens than the longest match"),
    Mistake("encoded across chunks", lambda text, merges: _encode(text, merges, split=False), _NO_SPLIT),
    Mistake("overlapping merge", lambda text, merges: _encode(text, merges, overlap=True), _OVERLAP_MERGE),
    Mistake("merged as text", lambda text, merges: _encode(text, merges, as_text=True), _AS_TEXT),
]
_DECODE_MISTAKES = [
    Mistake("decoded token by token", lambda ids, merges: _decode(ids, merges, per_token=True),
            "your decode turns each token into a str on its own: a token may hold part of a character (你 is 3 "
            "bytes, e4 bd a0, often split over tokens), so decode the joined BYTES once: "
            "b''.join(vocab[i] for i in ids).decode('utf-8', errors='replace')"),
    Mistake("errors='ignore'", lambda ids, merges: _decode(ids, merges, errors="ignore"),
            "your decode drops bytes that are not valid UTF-8 (errors='ignore'): the contract replaces them by "
            "U+FFFD, errors='replace', as GPT-2 and minbpe do"),
]
MISTAKES = tuple(_TRAIN_MISTAKES + _ENCODE_MISTAKES + _DECODE_MISTAKES)


# ----------------------------------------------------------------------------- reading the user's results


def _short(text, limit=40):
    return repr(text if len(text) <= limit else text[:limit] + "…")


def _merges(value, where):
    if not isinstance(value, (list, tuple)):
        raise Fail(t("{where}: train_bpe should return a list of (left id, right id) pairs, got {got}", where=where,
                     got=describe(value)))
    out = []
    for i, pair in enumerate(value):
        if not (isinstance(pair, (list, tuple)) and len(pair) == 2 and all(_is_int(x) for x in pair)):
            raise Fail(t("{where}: merge {i} should be a pair of ints (left id, right id), got {got}", where=where, i=i,
                         got=repr(pair)))
        out.append((int(pair[0]), int(pair[1])))
    return out


def _ids(value, where):
    if not isinstance(value, (list, tuple)) or not all(_is_int(x) for x in value):
        raise Fail(t("{where}: encode should return a list of int ids, got {got}", where=where, got=describe(value)))
    return [int(x) for x in value]


def _is_int(x):
    return isinstance(x, int) and not isinstance(x, bool)


def _first_difference(got, want):
    for i, (g, w) in enumerate(zip(got, want)):
        if g != w:
            return i, g, w
    n = min(len(got), len(want))
    return n, got[n] if n < len(got) else t("nothing"), want[n] if n < len(want) else t("nothing")


def _user_train(kit, text, n, where):
    return _merges(kit.user((text, n), target="train_bpe"), where)


def _user_encode(kit, text, merges, where):
    return _ids(kit.user((text, [tuple(p) for p in merges]), target="encode"), where)


def _user_decode(kit, ids, merges, where):
    value = kit.user((list(ids), [tuple(p) for p in merges]), target="decode")
    if not isinstance(value, str):
        raise Fail(t("{where}: decode should return a str, got {got}", where=where, got=describe(value)))
    return value


def _expect_merges(kit, text, n, where):
    got, want = _user_train(kit, text, n, where), train_ref(text, n)
    if got != want:
        i, g, w = _first_difference(got, want)
        found = kit.name_mistake((), got, _TRAIN_MISTAKES, run=lambda m: m.impl(text, n), same=lambda u, v: u == v)
        raise Fail(t("{where}: train_bpe returned {count} merges, the reference {expected}; first difference at merge "
                     "{i}: got {got}, expected {want}", where=where, count=len(got), expected=len(want), i=i,
                     got=g, want=w), found)


def _expect_ids(kit, text, merges, where):
    got, want = _user_encode(kit, text, merges, where), encode_ref(text, merges)
    if got != want:
        i, g, w = _first_difference(got, want)
        found = kit.name_mistake((), got, _ENCODE_MISTAKES, run=lambda m: m.impl(text, merges),
                                 same=lambda u, v: u == v, confirm=lambda m: _everywhere(kit, m))
        raise Fail(t("{where}: encode({text}) gave {count} ids, the reference {expected}; first difference at "
                     "position {i}: got {got}, expected {want}", where=where, text=_short(text), count=len(got),
                     expected=len(want), i=i, got=g, want=w), found)


def _everywhere(kit, mistake) -> bool:
    """A named way of encoding is said only if it gives the user's ids on every hand-made probe, where the user's
    are right too: merging the leftmost pair the merges know and the longest match agree on one text, not on all."""
    for _, merges, text in _HAND + _TELLS:
        try:
            if _user_encode(kit, text, merges, "") != mistake.impl(text, merges):
                return False
        except (Fail, UserError):
            return False
    return True


def _expect_text(kit, ids, merges, want, where):
    got = _user_decode(kit, ids, merges, where)
    if got != want:
        found = kit.name_mistake((), got, _DECODE_MISTAKES, run=lambda m: m.impl(ids, merges),
                                 same=lambda u, v: u == v)
        raise Fail(t("{where}: decode gave {got}, expected {want}", where=where, got=_short(got, 60),
                     want=_short(want, 60)), found)


# ----------------------------------------------------------------------------- checks


@check("structure", "train_bpe(text, num_merges), encode(text, merges) and decode(ids, merges) are functions")
def structure(kit):
    expect_structure(kit, "train_bpe", module=False, params=["text", "num_merges"])
    expect_structure(kit, "encode", module=False, params=["text", "merges"])
    expect_structure(kit, "decode", module=False, params=["ids", "merges"])


@check("numerics", "train_bpe learns the reference's merges, in order, on English, Chinese and mixed corpora")
def merges_match(kit):
    for name, text, n in _CORPORA:
        _expect_merges(kit, text, n, t("{name} corpus, num_merges={n}", name=t(name), n=n))


@check("numerics", "encode gives the reference's ids with the reference's merges")
def ids_match(kit):
    for name, corpus, n in _CORPORA:
        merges = train_ref(corpus, n)
        for text in _TEXTS:
            _expect_ids(kit, text, merges, t("merges of the {name} corpus", name=t(name)))


@check("numerics", "decode joins the bytes of the ids before UTF-8: a Chinese character split over tokens comes back")
def decode_match(kit):
    _expect_text(kit, [0xE4, 0xBD, 0xA0, 0xE5, 0xA5, 0xBD], [], "你好", t("single bytes, no merges"))
    for name, corpus, n in _CORPORA:
        merges = train_ref(corpus, n)
        for text in _TEXTS:
            _expect_text(kit, encode_ref(text, merges), merges, text, t("merges of the {name} corpus", name=t(name)))


@check("properties", "ties between equally frequent pairs go to the smallest (left id, right id)")
def ties(kit):
    for text, n in _TIES:
        _expect_merges(kit, text, n, t("corpus {text}, every top pair twice", text=repr(text)))


@check("properties", "'aaa' holds the pair (a, a) twice when counting, and merges into [aa, a]")
def aaa(kit):
    text, n = _AAA
    _expect_merges(kit, text, n, t("corpus {text}", text=repr(text)))
    merges = train_ref(text, n)
    _expect_ids(kit, "aaa aaaa aaaaa", merges, t("merges of {text}", text=repr(text)))


@check("properties", "no merge crosses a chunk boundary, in training and in encoding")
def boundaries(kit):
    for name, merges, text in _HAND[1:2]:
        _expect_ids(kit, text, merges, t("hand-made merges ({name}) {merges}", name=t(name), merges=merges))
    _expect_merges(kit, "xa xa xa", 3, t("corpus {text}", text=repr("xa xa xa")))


@check("properties", "merges apply in learned rank order, not by frequency in the text nor by longest match")
def rank_order(kit):
    for name, merges, text in (_HAND[0], _HAND[2]):
        _expect_ids(kit, text, merges, t("hand-made merges ({name}) {merges}", name=t(name), merges=merges))


@check("properties", "decode(encode(s)) == s for Chinese, emoji and whitespace runs, with your own merges")
def round_trip(kit):
    corpora = {name: (text, n) for name, text, n in _CORPORA}
    for name, s in _ROUND:
        corpus, n = corpora[name]
        merges = _user_train(kit, corpus, n, t("{name} corpus", name=t(name)))
        ids = _user_encode(kit, s, merges, t("{name} corpus", name=t(name)))
        back = _user_decode(kit, ids, merges, t("{name} corpus", name=t(name)))
        if back != s:
            found = kit.name_mistake((), back, _DECODE_MISTAKES, run=lambda m: m.impl(ids, merges),
                                     same=lambda u, v: u == v)
            raise Fail(t("with your merges of the {name} corpus: decode(encode({text})) = {back}: the round trip must "
                         "give the text back exactly", name=t(name), text=_short(s), back=_short(back, 60)), found)


@check("properties", "ids of three digits: a long run of merges fuses only the ids each merge names")
def long_run(kit):
    name, text, n = _LONG_RUN
    _expect_merges(kit, text, n, t("{name} corpus merged until every chunk is one token (num_merges={n}, ids up to "
                                   "{top})", name=t(name), n=n, top=255 + len(train_ref(text, n))))
    for name, merges, text in _DIGITS:
        _expect_ids(kit, text, merges, t("hand-made merges ({name}) {merges}", name=t(name), merges=merges))


@check("properties", "train_bpe stops once every chunk is a single token, and not before")
def stops_early(kit):
    text, n = _EARLY
    try:
        _expect_merges(kit, text, n, t("corpus {text}, num_merges={n}", text=repr(text), n=n))
    except UserError as err:
        if err.not_implemented:
            raise
        raise Fail(t("corpus {text}, num_merges={n}: your train_bpe raised {err} once no pair was left",
                     text=repr(text), n=n, err=err),
                   t("your loop runs num_merges times even when nothing is left to merge: stop when the counts are "
                     "empty (after 2 merges here)")) from None


@check("properties", "decode turns bytes that are not UTF-8 into U+FFFD (errors='replace')")
def invalid_bytes(kit):
    for ids in _INVALID:
        want = bytes(ids).decode("utf-8", errors="replace")
        try:
            _expect_text(kit, ids, [], want, t("ids {ids}", ids=ids))
        except UserError as err:
            if err.not_implemented:
                raise
            raise Fail(t("ids {ids}: your decode raised {err}", ids=ids, err=err),
                       t("decode with errors='replace', so that any ids give a str (U+FFFD for bytes that are not "
                         "UTF-8)")) from None


@check("hygiene", "encode and decode leave the merges they are given unchanged")
def merges_unchanged(kit):
    merges = train_ref(_ENGLISH, 40)
    for target, args in (("encode", (_TEXTS[0], merges)), ("decode", (encode_ref(_TEXTS[0], merges), merges))):
        _, after = kit.user(args, target=target, return_args=True)
        if [tuple(p) for p in after[1]] != merges or len(after[1]) != len(merges):
            raise Fail(t("{target} changed the merges it was given: the caller's tokenizer must stay as it was (build "
                         "your own dict of ranks or vocabulary instead)", target=target))
