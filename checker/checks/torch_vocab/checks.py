"""Hidden checks: tokenize, build a vocabulary with <PAD> and <UNK>, encode, pad a batch.

Nothing here is a float tensor, so there are no OUTPUTS and no standard checks: every function
is checked below, exactly, with its own named mistakes. TARGET (pad_batch) is what `kata case`
shows and what is timed.
"""

import re
from collections import Counter

import torch

from checker.checks.torch_vocab import driver as child_vocab
from checker.kit import Fail, Mistake, UserError, case, check, compare, describe, expect_structure, raised, shape_relation
from checker.lang import t

TARGET = "pad_batch"
GRADIENTS = False  # integer ids only: nothing to differentiate

_PAD, _UNK = "<PAD>", "<UNK>"

# ----------------------------------------------------------------------------- inputs

# tokenize: the PyTorch notebook tutorial's sentences plus what a tokenizer must get right (capitals, punctuation
# glued to words, apostrophes, digits, hyphens, runs of spaces and tabs, an empty sentence).
_SENTENCES = {
    1: ["Early morning sunlight filters through the window and falls on the desk.",
        "Xiao Ming carries his schoolbag, and goes to school happily!",
        "Is the little dog running around cheerfully on the grass?",
        "The stars at night hang in the sky like countless diamonds."],
    2: ["Don't panic:  it's 10 a.m., not 9!",
        "Well-known\twords (NLP) split...",
        "HELLO hello Hello;",
        "",
        "Café au lait costs 3.50 euros?!"],
    3: ["清晨 阳光 透过 窗户 洒 在 书桌 上",
        "秋天 到了 ， 树上 的 叶子 慢慢 变黄",
        "  我 在 学 Python  和 GPT-4 。 ",
        "春天 的 小鸟 很 活泼 ， 到处 飞"],
}
_TOKENIZE_CASES = [
    case(1, B=4, lang="en (default: lang not passed)"),
    case(2, B=5, lang="en"),
    case(3, B=4, lang="zh"),
]

_WORDS = ["the", "cat", "sat", "on", "a", "mat", "dog", "ran", ",", "，", "big", "red", "sun", "and", "."]


def corpus(c, salt=0):
    """B tokenized sentences of different lengths, drawn from WORDS with skewed frequencies."""
    g = c.generator(salt)
    weights = torch.linspace(3.0, 0.4, len(_WORDS))
    lengths = torch.randint(2, 9, (c.B,), generator=g)
    return [[_WORDS[i] for i in torch.multinomial(weights, int(n), replacement=True, generator=g).tolist()]
            for n in lengths]


# build_vocab: min_freq 1 (the default, not passed), 2 and 3. Each corpus has words seen exactly
# min_freq times and words seen min_freq - 1 times (checker/checks/torch_vocab/test_reference.py checks it).
_VOCAB_CASES = [
    case(11, B=3, min_freq="default (1)"),
    case(12, B=9, min_freq=2),
    case(13, B=12, min_freq=3),
]


def vocab_args(c):
    min_freq = c.dims.get("min_freq")
    if min_freq is None:
        return (corpus(c),)
    tokenized = corpus(c)
    tokenized.insert(1, ["moon"] * min_freq)  # seen min_freq times, all in one sentence
    return tokenized, min_freq


# encode: a vocabulary built from one corpus (min_freq=2), then sentences with unknown words
# (rare ones filtered out, and words never seen). An empty sentence is a follow-up, held apart in
# _EMPTY_ENCODE: torch.tensor([]) is float32, so code right on every real sentence can fail there.
_ENCODE_CASES = [case(21, B=4), case(22, B=6)]
_EMPTY_ENCODE = case(23, B=6, empty="sentence 2")


def encode_args(c):
    vocab_corpus = corpus(case(12, B=9, min_freq=2))
    word2idx = _reference_word2idx(vocab_corpus, 2)
    sentences = corpus(c, salt=1)
    sentences[0] = sentences[0] + ["zebra"]  # never seen
    sentences[-1] = ["quokka", "the"] + sentences[-1]  # never seen, first
    if "empty" in c.extra:
        sentences[2] = []  # an empty sentence gives an empty LongTensor (0,)
    return sentences, word2idx


def _reference_word2idx(tokenized, min_freq):
    word2idx = {_PAD: 0, _UNK: 1}
    for word, freq in Counter(token for s in tokenized for token in s).items():
        if freq >= min_freq:
            word2idx[word] = len(word2idx)
    return word2idx


# pad_batch: every dimension its own size (B != T_max); the longest sentence is not first;
# pad_idx 0 and not 0; ids never equal pad_idx. An empty sentence is the follow-up case 35.
CASES = [
    case(31, B=3, T_max=7, pad_idx=0),
    case(32, B=5, T_max=6, pad_idx=3),
    case(33, B=4, T_max=2, pad_idx=0),
]
TIMING = case(34, B=64, T_max=50, pad_idx=0)
_EMPTY_PAD = case(35, B=5, T_max=6, pad_idx=3)
_LENGTHS = {31: [4, 7, 2], 32: [3, 2, 6, 1, 6], 33: [2, 1, 2, 2], 34: None, 35: [3, 0, 6, 1, 6]}


def inputs(c, dtype="float64"):
    """(encoded, pad_idx): B LongTensors (T_i,) with ids in [4, 30), so none equals pad_idx."""
    g = c.generator()
    lengths = _LENGTHS[c.id] or torch.randint(1, c.T_max, (c.B - 1,), generator=g).tolist() + [c.T_max]
    return [torch.randint(4, 30, (n,), generator=g) for n in lengths], c.pad_idx


# ----------------------------------------------------------------------------- named mistakes

_TOKEN = re.compile(r"\w+|[^\w\s]")
_SEED004_PUNCT = ".,;!?"


def _seed004(s):
    for p in _SEED004_PUNCT:
        s = s.replace(p, "")
    return s.lower().split()


def _tok(per_sentence_en, per_sentence_zh=str.split):
    return lambda sentences, lang="en": [(per_sentence_zh if lang == "zh" else per_sentence_en)(s) for s in sentences]


_EN = lambda s: _TOKEN.findall(s.lower())  # noqa: E731

_TOKENIZE_MISTAKES = [
    Mistake("not lowercased", _tok(_TOKEN.findall),
            "your English tokens keep their capitals ('Early', 'HELLO'): lowercase the sentence first, s.lower()"),
    Mistake("the PyTorch notebook tutorial drops punctuation", _tok(_seed004),
            "you delete punctuation like the PyTorch notebook tutorial (replace('.', '') ... then split()): here every punctuation mark "
            "is a token of its own, re.findall(r\"\\w+|[^\\w\\s]\", s.lower())"),
    Mistake("punctuation dropped", _tok(lambda s: re.findall(r"\w+", s.lower())),
            "your tokens have no punctuation marks: keep each one as a token, re.findall(r\"\\w+|[^\\w\\s]\", s.lower())"),
    Mistake("split on spaces", _tok(lambda s: s.lower().split()),
            "your English tokens keep punctuation glued to words ('desk.'): split words and punctuation apart, "
            "re.findall(r\"\\w+|[^\\w\\s]\", s.lower())"),
    Mistake("punctuation runs kept", _tok(lambda s: re.findall(r"\w+|[^\w\s]+", s.lower())),
            "you keep runs of punctuation together ('...', '?!'): each punctuation mark is its own token, [^\\w\\s] "
            "without the +"),
    Mistake("apostrophes inside words", _tok(lambda s: re.findall(r"[\w']+|[^\w\s]", s.lower())),
            "you keep apostrophes inside words (\"don't\"): the rule splits them, \\w+ stops at the apostrophe "
            "(don ' t)"),
    Mistake("letters only", _tok(lambda s: re.findall(r"[a-z]+|[^\w\s]", s.lower())),
            "your words are [a-z]+: digits (10, 9) and letters outside a-z are lost or split; a word is a run of "
            "word characters, \\w+"),
    Mistake("zh tokenized as English", _tok(_EN, _EN),
            "your Chinese tokens are lowercased or split at punctuation ('python', 'gpt', '-', '4'): Chinese "
            "sentences come segmented, so split them on whitespace and nothing else, s.split()"),
    Mistake("zh lowercased", _tok(_EN, lambda s: s.lower().split()),
            "your Chinese tokens are lowercased ('python'): for lang='zh' only split on whitespace, s.split()"),
    Mistake("zh split on one space", _tok(_EN, lambda s: s.split(" ")),
            "your Chinese tokens include empty strings: s.split(' ') splits at every single space; s.split() "
            "(no argument) splits on runs of whitespace and ignores the ends"),
]


def _vocab(words_in_order, specials=((_PAD, 0), (_UNK, 1))):
    """The special tokens, then each word taking the next free index."""
    word2idx = dict(specials)
    for w in words_in_order:
        word2idx.setdefault(w, len(word2idx))
    return word2idx


def _counts(tokenized):
    return Counter(t for s in tokenized for t in s)


def _kept(tokenized, min_freq, strict=False):
    return [w for w, f in _counts(tokenized).items() if (f > min_freq if strict else f >= min_freq)]


_VOCAB_MISTAKES = [
    Mistake("min_freq strict", lambda t, m=1: _vocab(_kept(t, m, strict=True)),
            "your vocabulary leaves out the words seen exactly min_freq times (freq > min_freq): keep freq >= min_freq"),
    Mistake("min_freq ignored", lambda t, m=1: _vocab(_kept(t, 1)),
            "your vocabulary keeps every word, whatever min_freq says: keep only words with freq >= min_freq"),
    Mistake("alphabetical", lambda t, m=1: _vocab(sorted(_kept(t, m))),
            "your words are sorted alphabetically: they take indices 2, 3, ... in order of FIRST APPEARANCE "
            "(iterate over Counter(...).items(), which keeps that order)"),
    Mistake("by frequency", lambda t, m=1: _vocab([w for w, f in _counts(t).most_common() if f >= m]),
            "your words are sorted by frequency (most_common()): they take indices 2, 3, ... in order of FIRST "
            "APPEARANCE (iterate over Counter(...).items())"),
    Mistake("specials swapped", lambda t, m=1: _vocab(_kept(t, m), specials=((_UNK, 0), (_PAD, 1))),
            "your <PAD> and <UNK> are swapped: <PAD> = 0 (so padding is id 0, as make_pad_mask and "
            "nn.Embedding(padding_idx=0) expect), <UNK> = 1"),
    Mistake("no specials", lambda t, m=1: {w: i for i, w in enumerate(_kept(t, m))},
            "your vocabulary has no <PAD> and <UNK>: start from {'<PAD>': 0, '<UNK>': 1} and give words 2, 3, ..."),
    Mistake("specials last", lambda t, m=1: {**{w: i for i, w in enumerate(_kept(t, m))},
                                             _PAD: len(_kept(t, m)), _UNK: len(_kept(t, m)) + 1},
            "your <PAD> and <UNK> come after the words: they are 0 and 1, and words start at 2"),
    Mistake("no UNK", lambda t, m=1: _vocab(_kept(t, m), specials=((_PAD, 0),)),
            "your vocabulary has no <UNK>: start from {'<PAD>': 0, '<UNK>': 1}"),
    Mistake("words from 1", lambda t, m=1: {_PAD: 0, _UNK: 1, **{w: i + 1 for i, w in enumerate(_kept(t, m))}},
            "your first word takes index 1, the index of <UNK>: words start at 2 (word2idx[word] = len(word2idx))"),
    Mistake("document frequency", lambda t, m=1: _vocab([w for w in _counts(t) if sum(w in s for s in t) >= m]),
            "you count each word once per sentence (a set per sentence): min_freq is about every occurrence, "
            "Counter(token for sentence in tokenized for token in sentence)"),
    Mistake("gaps in the indices", lambda t, m=1: {_PAD: 0, _UNK: 1, **{w: i + 2 for i, (w, f) in enumerate(
                _counts(t).items()) if f >= m}},
            "your indices have gaps: a word takes its position among ALL counted words, so the rare ones min_freq "
            "drops leave holes; give each kept word the next free index, len(word2idx)"),
    Mistake("the PyTorch notebook tutorial zh drops commas", lambda t, m=1: _vocab([w for w in _kept(t, m) if w not in (",", "，")]),
            "you drop ',' and '，' from the vocabulary (the PyTorch notebook tutorial's build_chinese_vocab does): here every token "
            "seen >= min_freq times is a word, punctuation included"),
]


def _enc(fallback):
    """encode with another rule for unknown words: fallback(word2idx) is their id, None drops them."""
    def impl(tokenized, word2idx):
        unk = fallback(word2idx)
        return [torch.tensor([word2idx.get(t, unk) for t in s if t in word2idx or unk is not None], dtype=torch.long)
                for s in tokenized]
    return impl


_ENCODE_MISTAKES = [
    Mistake("unknown -> PAD", _enc(lambda w: 0),
            "your unknown words get 0, the index of <PAD>: map them to word2idx['<UNK>'] (1), "
            "word2idx.get(token, word2idx['<UNK>'])"),
    Mistake("unknown dropped", _enc(lambda w: None),
            "you drop the unknown words: map each one to word2idx['<UNK>'], so every token keeps its place"),
    Mistake("unknown -> len", _enc(lambda w: len(w)),
            "your unknown words get len(word2idx), an index outside the vocabulary (nn.Embedding would fail): "
            "map them to word2idx['<UNK>']"),
]


def _pad(left=False, value=None, transpose=False):
    """pad_batch with knobs; every knob at its default gives the right answer."""
    def impl(encoded, pad_idx=0):
        T_max = max(len(seq) for seq in encoded)
        out = torch.full((len(encoded), T_max), pad_idx if value is None else value, dtype=torch.long)
        for i, seq in enumerate(encoded):
            if left:
                out[i, T_max - len(seq):] = seq
            else:
                out[i, :len(seq)] = seq
        return out.T if transpose else out
    return impl


_PAD_MISTAKES = [
    Mistake("left padding", _pad(left=True),
            "you pad on the LEFT ([PAD, PAD, 5, 8]): pad on the right ([5, 8, PAD, PAD]), the tokens first, "
            "as the PyTorch notebook tutorial does and as make_pad_mask and the causal mask expect"),
    Mistake("pad_idx ignored", _pad(value=0),
            "you pad with 0 whatever pad_idx says: fill with pad_idx, torch.full((B, T_max), pad_idx, dtype=torch.long)"),
    Mistake("(T_max, B)", _pad(transpose=True),
            "your batch is (T_max, B): nn.utils.rnn.pad_sequence puts time first unless batch_first=True; "
            "return (B, T_max)"),
]


# ----------------------------------------------------------------------------- checks

_SIGNATURES = {
    "tokenize": ["sentences", "lang"],
    "build_vocab": ["tokenized", "min_freq"],
    "encode": ["tokenized", "word2idx"],
    "pad_batch": ["encoded", "pad_idx"],
}


@check("structure", "tokenize, build_vocab, encode and pad_batch exist with their documented parameters")
def structure(kit):
    for name, params in _SIGNATURES.items():
        expect_structure(kit, name, module=False, params=params)


def _call(kit, target, args, c):
    """The user's target(*args); a KeyError (an unknown word) becomes a verdict, not a crash."""
    try:
        return kit.user(args, target=target)
    except UserError as err:
        if err.kind == "KeyError" and target == "encode":
            raise Fail(t("{label}: encode raised KeyError: {message}", label=c.label, message=err.message),
                       t("your code raised KeyError on a word not in the vocabulary: give unknown words the index of "
                         "<UNK>, word2idx.get(token, word2idx['<UNK>'])")) from None
        raise


def _named(kit, mistakes, args, got, same):
    """The explanation of the first mistake whose result equals got, or None (mistakes are plain functions)."""
    return kit.name_mistake(args, got, mistakes, run=lambda m: m.impl(*args), same=same)


def _tensors_equal(got, want) -> bool:
    if isinstance(want, torch.Tensor):
        return isinstance(got, torch.Tensor) and got.shape == want.shape and got.dtype == want.dtype \
            and torch.equal(got, want)
    return isinstance(got, (list, tuple)) and len(got) == len(want) and all(map(_tensors_equal, got, want))


def _tokens_shown(tokens, start=0, limit=10) -> str:
    shown = ", ".join(repr(t) for t in tokens[start:start + limit])
    return f"[{'..., ' if start else ''}{shown}{', ...' if len(tokens) > start + limit else ''}]"


def _first_difference(got, want) -> int:
    return next((k for k, (g, w) in enumerate(zip(got, want)) if g != w), min(len(got), len(want)))


_SAME_LENGTH = ("your pad_batch raises on sentences of different lengths and works when they all have the same "
                "length: pad each sentence to T_max, the longest length, before putting them together (torch.full("
                "(B, T_max), pad_idx, dtype=torch.long) filled row by row, or pad_sequence(encoded, batch_first=True, "
                "padding_value=pad_idx))")
_FIRST_LONGEST = ("your pad_batch raises when a later sentence is longer than the first and works when the first is "
                  "the longest: the batch is as wide as the longest sentence, T_max = max(len(s) for s in encoded)")


def _pad_batch(kit, c, args):
    """The user's pad_batch(*args); when it raises, what about the lengths makes it raise, if two probes tell:
    the case's sentences cut to one length, and sorted longest first."""
    try:
        return kit.user(args, target="pad_batch")
    except UserError as err:
        encoded, pad_idx = args
        shortest = min(len(s) for s in encoded)

        def runs(batch):
            try:
                got = kit.user((batch, pad_idx), target="pad_batch")
            except UserError:
                return False
            return _tensors_equal(got, kit.reference((batch, pad_idx), target="pad_batch"))

        why = None
        if shortest and runs([s[:shortest] for s in encoded]):
            if not runs(sorted(encoded, key=len, reverse=True)):
                why = t(_SAME_LENGTH)
            elif max(len(s) for s in encoded) > len(encoded[0]):
                why = t(_FIRST_LONGEST)
        if why is None:
            raise
        raise raised(c.label, err, why) from None


_NOT_LONG = ("your encode gives {dtype} ids: the contract's ids are a LongTensor (int64), the dtype F.cross_entropy "
             "needs for its targets (nn.Embedding refuses float ids too); build them with torch.tensor(ids, "
             "dtype=torch.long) (torch.Tensor(ids) is float32, dtype=torch.int is int32)")


@check("shapes", "pad_batch returns a LongTensor (B, T_max); encode one LongTensor (T_i,) per sentence")
def shapes(kit):
    for c in CASES:
        got = _pad_batch(kit, c, inputs(c))
        want = kit.reference(inputs(c), target="pad_batch")
        if isinstance(got, torch.Tensor) and tuple(got.shape) != tuple(want.shape):
            found = _named(kit, _PAD_MISTAKES, inputs(c), got, _tensors_equal)
            raise Fail(t("{label}: pad_batch should return shape (B, T_max) = {want}, got {got}", label=c.label,
                         want=tuple(want.shape), got=tuple(got.shape)),
                       found or shape_relation(tuple(got.shape), tuple(want.shape), "(B, T_max)"), general=not found)
        if not isinstance(got, torch.Tensor) or got.dtype != torch.long:
            raise Fail(t("{label}: pad_batch should return a LongTensor (B, T_max) = {want}, got {what}; create it "
                         "with dtype=torch.long (nn.Embedding takes int64 ids)", label=c.label, want=tuple(want.shape),
                         what=_with_dtype(got)))
    for c in _ENCODE_CASES:
        args = encode_args(c)
        got = _call(kit, "encode", args, c)
        if not isinstance(got, (list, tuple)) or len(got) != c.B:
            raise Fail(t("{label}: encode should return a list of {B} LongTensors (one per sentence), got {got}",
                         label=c.label, B=c.B, got=describe(got)))
        for i, (g, sentence) in enumerate(zip(got, args[0])):
            if not isinstance(g, torch.Tensor) or g.dtype != torch.long or g.dim() != 1:
                not_long = isinstance(g, torch.Tensor) and g.dim() == 1 and sentence  # the diagnosis advises
                hint = t(" (torch.tensor([]) is float32: pass dtype=torch.long)") if not sentence else \
                    "" if not_long else t(" (torch.tensor(ids, dtype=torch.long))")
                raise Fail(t("{label}: encode's item {i} should be a 1-D LongTensor (T_i,), got {what}{hint}",
                             label=c.label, i=i, what=_with_dtype(g), hint=hint),
                           t(_NOT_LONG, dtype=g.dtype) if not_long else None)
            if len(g) != len(sentence):
                found = _named(kit, _ENCODE_MISTAKES, args, got, _tensors_equal)
                raise Fail(t("{label}: encode's item {i} should have shape (T_i,) = ({T},), one id per token, got "
                             "{got}", label=c.label, i=i, T=len(sentence), got=tuple(g.shape)), found)


@check("masking", "pad_batch pads on the RIGHT with pad_idx: row i is sentence i, then PAD")
def padding(kit):
    for c in CASES:
        args = inputs(c)
        got = _pad_batch(kit, c, args)
        want = kit.reference(args, target="pad_batch")
        try:
            compare(got, want, t("pad_batch's result"), "(B, T_max)", exact=True)
        except Fail as fail:
            found = _named(kit, _PAD_MISTAKES, args, got, _tensors_equal)
            raise Fail(t("{label}, lengths {lengths}: {fail}", label=c.label, lengths=[len(s) for s in args[0]],
                         fail=fail.message), found or fail.diagnosis) from None


@check("numerics", "tokenize('...') lowercases English and splits words and punctuation marks")
def tokenize_english(kit):
    _tokenize(kit, [c for c in _TOKENIZE_CASES if c.lang.startswith("en")])


@check("numerics", "tokenize(..., lang='zh') splits pre-segmented Chinese on whitespace only")
def tokenize_chinese(kit):
    _tokenize(kit, [c for c in _TOKENIZE_CASES if c.lang == "zh"])


def _tokenize_args(c):
    sentences = list(_SENTENCES[c.id])
    return (sentences,) if "default" in c.lang else (sentences, c.lang.split()[0])


def _tokenize(kit, cases):
    for c in cases:
        args = _tokenize_args(c)
        got = kit.user(args, target="tokenize")
        want = kit.reference(args, target="tokenize")
        if got == want:
            continue
        if not isinstance(got, list) or not all(isinstance(s, list) for s in got):
            raise Fail(t("{label}: tokenize should return a list with one list of str per sentence, got {got}",
                         label=c.label, got=describe(got)))
        if len(got) != len(want):
            raise Fail(t("{label}: tokenize should return {want} token lists (one per sentence), got {got}",
                         label=c.label, want=len(want), got=len(got)))
        i = next(i for i, (g, w) in enumerate(zip(got, want)) if g != w)
        k = _first_difference(got[i], want[i])
        start = max(0, k - 3)
        found = _named(kit, _TOKENIZE_MISTAKES, args, got, lambda a, b: a == b)
        if not found and any("" in g for g in got):
            found = t("your tokens include empty strings: split(' ') splits at every single space; split() with no "
                      "argument splits on runs of whitespace and ignores the ends")
        raise Fail(t("{label}: sentence {i} {sentence} gives {got}, expected {want} (first difference at token {k})",
                     label=c.label, i=i, sentence=repr(args[0][i]), got=_tokens_shown(got[i], start),
                     want=_tokens_shown(want[i], start), k=k), found)


def _user_vocab(kit, args):
    """(word2idx, idx2word items or what came instead) from the user's build_vocab, run by a driver."""
    value = kit.drive(child_vocab.build_vocab, *args)
    return value


def _as_dict(plain):
    """A dict from the driver's plain form, or None when it was not a dict."""
    if isinstance(plain, dict) and set(plain) == {"dict", "type"}:
        return {k: v for k, v in plain["dict"]}
    return None


def _shown_vocab(mapping, limit=10):
    items = list(mapping.items())
    return "{" + ", ".join(f"{k!r}: {v!r}" for k, v in items[:limit]) + (", ...}" if len(items) > limit else "}")


def _times(n: int) -> str:
    return t("{n} time", n=n) if n == 1 else t("{n} times", n=n)


def _with_dtype(value) -> str:
    """describe(value), with its dtype when it is a tensor."""
    if isinstance(value, torch.Tensor):
        return t("{what} of dtype {dtype}", what=describe(value), dtype=value.dtype)
    return describe(value)


def _vocab_difference(got, want, counts, min_freq) -> str:
    """The first word (in the expected order) whose index is wrong, missing, or one that should not be there."""
    for word, idx in want.items():
        if word not in got:
            if word in counts:
                return t("{word} is missing (seen {times}, min_freq {min_freq})", word=repr(word),
                         times=_times(counts[word]), min_freq=min_freq)
            return t("{word} is missing", word=repr(word))
        if got[word] != idx:
            return t("word2idx[{word}] is {got}, expected {idx}", word=repr(word), got=repr(got[word]), idx=idx)
    extra = next(w for w in got if w not in want)
    if extra in counts:
        return t("{word} should not be there (seen {times}, fewer than min_freq {min_freq})", word=repr(extra),
                 times=_times(counts[extra]), min_freq=min_freq)
    return t("{word} should not be there (never seen)", word=repr(extra))


@check("numerics", "build_vocab: <PAD> = 0, <UNK> = 1, then words seen >= min_freq times, in order of first appearance")
def vocabulary(kit):
    for c in _VOCAB_CASES:
        args = vocab_args(c)
        value = _user_vocab(kit, args)
        want_w2i, want_i2w = kit.reference(args, target="build_vocab")
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise Fail(t("{label}: build_vocab should return a tuple (word2idx, idx2word), got {got}", label=c.label,
                         got=t("a dict") if _as_dict(value) is not None else describe(value)))
        w2i = _as_dict(value[0])
        if w2i is None:
            raise Fail(t("{label}: word2idx should be a dict {{word: index}}, got {got}", label=c.label,
                         got=describe(value[0])))
        if w2i == want_w2i:
            continue
        found = _named(kit, _VOCAB_MISTAKES, args, w2i, lambda a, b: a == b)
        if not found and set(w2i) == set(want_w2i) and all(isinstance(v, int) for v in w2i.values()):
            found = t("your vocabulary has the right words in a different order: words take indices 2, 3, ... in "
                      "order of first appearance; iterate over Counter(...).items() or the tokens themselves, not "
                      "over a set (whose order is arbitrary) or a sorted list")
        counts = Counter(token for sentence in args[0] for token in sentence)
        min_freq = args[1] if len(args) > 1 else 1
        raise Fail(t("{label}: {difference}; your word2idx is {shown}", label=c.label,
                     difference=_vocab_difference(w2i, want_w2i, counts, min_freq), shown=_shown_vocab(w2i)), found)


@check("numerics", "build_vocab: idx2word is the dict {index: word}, the exact inverse of word2idx")
def inverse(kit):
    for c in _VOCAB_CASES:
        value = _user_vocab(kit, vocab_args(c))
        if not isinstance(value, (tuple, list)) or len(value) != 2:
            raise Fail(t("{label}: build_vocab should return a tuple (word2idx, idx2word), got {got}", label=c.label,
                         got=describe(value)))
        w2i, i2w = _as_dict(value[0]) or {}, _as_dict(value[1])
        if i2w is None:
            raise Fail(t("{label}: idx2word should be a dict {{index: word}} (the PyTorch notebook tutorial's inv_vocab), got {got}",
                         label=c.label, got=describe(value[1])))
        keys = [k for k in i2w if not isinstance(k, int) or isinstance(k, bool)]
        if keys:
            raise Fail(t("{label}: idx2word's keys should be int indices, got {key} ({kind})", label=c.label,
                         key=repr(keys[0]), kind=type(keys[0]).__name__),
                       t("your idx2word is not keyed by the indices themselves: invert word2idx, {inverse}",
                         inverse="{idx: word for word, idx in word2idx.items()}"))
        if i2w != {i: w for w, i in w2i.items()}:
            raise Fail(t("{label}: idx2word {i2w} is not the inverse of your word2idx {w2i}: build it from word2idx, "
                         "{{idx: word for word, idx in word2idx.items()}}", label=c.label, i2w=_shown_vocab(i2w),
                         w2i=_shown_vocab(w2i)))


@check("numerics", "encode maps each token to its index and unknown words to <UNK>")
def encoding(kit):
    for c in _ENCODE_CASES:
        args = encode_args(c)
        got = _call(kit, "encode", args, c)
        want = kit.reference(args, target="encode")
        if _tensors_equal(got, want):
            continue
        if not isinstance(got, (list, tuple)) or len(got) != len(want):
            raise Fail(t("{label}: encode should return a list of {n} LongTensors, got {got}", label=c.label,
                         n=len(want), got=describe(got)))
        i = next(i for i, (g, w) in enumerate(zip(got, want)) if not _tensors_equal(g, w))
        found = _named(kit, _ENCODE_MISTAKES, args, got, _tensors_equal)
        try:
            compare(got[i], want[i], t("encode's item {i} (tokens {tokens})", i=i,
                                       tokens=_tokens_shown(args[0][i], limit=6)), "(T_i,)", exact=True)
        except Fail as fail:
            raise Fail(t("{label}: {fail}", label=c.label, fail=fail.message), found or fail.diagnosis) from None


def _empty_why() -> str:
    return t("Follow-up: what does your pipeline do with an empty sentence (a blank line in the corpus, or a sentence "
             "made only of spaces)? torch.tensor([]) is float32, so torch.tensor(ids) without dtype=torch.long gives a "
             "float tensor there, and nn.Embedding refuses float ids; the reference returns an empty LongTensor (0,) "
             "from encode and a row of PAD from pad_batch")


@check("shapes", "an empty sentence: encode gives an empty LongTensor (0,), pad_batch a row of PAD", followup=True)
def empty_sentence(kit):
    # Beyond the textbook answer (the PyTorch notebook tutorial never meets one), so a follow-up question, not a failure.
    c = _EMPTY_ENCODE
    args = encode_args(c)
    got = _call(kit, "encode", args, c)
    want = kit.reference(args, target="encode")
    if not _tensors_equal(got, want):
        item = got[2] if isinstance(got, (list, tuple)) and len(got) == len(want) else got
        raise Fail(t("{label}: encode gives {shown} for the empty sentence 2 (torch.tensor([]) is float32: pass "
                     "dtype=torch.long). {why}", label=c.label, shown=_with_dtype(item), why=_empty_why()))
    c = _EMPTY_PAD
    args = inputs(c)
    got = kit.user(args, target="pad_batch")
    want = kit.reference(args, target="pad_batch")
    try:
        compare(got, want, t("pad_batch's result"), "(B, T_max)", exact=True)
    except Fail as fail:
        raise Fail(t("{label}, lengths {lengths}: {fail}. {why}", label=c.label, lengths=[len(x) for x in args[0]],
                     fail=fail, why=_empty_why())) from None


@check("hygiene", "no function modifies the lists or tensors it is given")
def unchanged(kit):
    calls = [("tokenize", _tokenize_args(_TOKENIZE_CASES[1])), ("build_vocab", vocab_args(_VOCAB_CASES[1])),
             ("encode", encode_args(_ENCODE_CASES[1])), ("pad_batch", inputs(CASES[1]))]
    for target, sent in calls:
        _, after = kit.user(sent, target=target, return_args=True)
        for i, (before, now) in enumerate(zip(sent, after)):
            same = _tensors_equal(now, before) if isinstance(before, list) and before and \
                isinstance(before[0], torch.Tensor) else now == before
            if not same:
                raise Fail(t("{target} modified its argument {number} ({name}): build new lists and tensors instead "
                             "of changing the caller's (no .append/.pop/.sort on the input, no in-place tensor writes)",
                             target=target, number=i + 1, name=_SIGNATURES[target][i]))
