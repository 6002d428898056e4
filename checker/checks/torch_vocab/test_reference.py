"""The reference vocab functions agree with independent definitions: seed 004's own code and output,
tokens written out by hand, and torch.nn.utils.rnn.pad_sequence. Also: the hidden checks' inputs
really exercise what they claim (min_freq boundaries, an order of first appearance that is neither
alphabetical nor by frequency)."""

from collections import Counter

import pytest
import torch
from torch import nn

from checker import catalogue, engine
from checker.checks.torch_vocab import checks as spec

solution = engine.load_solution(catalogue.find("vocab"))


def seed004_build_vocab(tokenized_data, min_freq=1):
    """Seed 004's build_vocab, verbatim but for the comments."""
    word_counter = Counter([token for sent in tokenized_data for token in sent])
    vocab = {"<PAD>": 0, "<UNK>": 1}
    for word, freq in word_counter.items():
        if freq >= min_freq:
            vocab[word] = len(vocab)
    inv_vocab = {idx: word for word, idx in vocab.items()}
    return vocab, inv_vocab


def seed004_pad_sequences(encoded_data, pad_idx=0):
    max_seq_len = max([len(seq) for seq in encoded_data])
    padded_batch = torch.full((len(encoded_data), max_seq_len), pad_idx, dtype=torch.long)
    for i, seq in enumerate(encoded_data):
        padded_batch[i, :len(seq)] = seq
    return padded_batch


@pytest.mark.parametrize("sentence, tokens", [
    ("Early morning sunlight filters through the window.", ["early", "morning", "sunlight", "filters", "through",
                                                           "the", "window", "."]),
    ("Don't panic:  it's 10 a.m., not 9!", ["don", "'", "t", "panic", ":", "it", "'", "s", "10", "a", ".", "m", ".",
                                           ",", "not", "9", "!"]),
    ("Well-known\twords (NLP) split...", ["well", "-", "known", "words", "(", "nlp", ")", "split", ".", ".", "."]),
    ("Café au lait costs 3.50 euros?!", ["café", "au", "lait", "costs", "3", ".", "50", "euros", "?", "!"]),
    ("", []),
])
def test_english_tokens_written_out_by_hand(sentence, tokens):
    assert solution.tokenize([sentence]) == [tokens]
    assert solution.tokenize([sentence], "en") == [tokens]


def test_chinese_tokens_are_the_whitespace_split():
    sentences = spec._SENTENCES[3]
    assert solution.tokenize(sentences, "zh") == [s.split() for s in sentences]
    assert solution.tokenize(sentences, "zh")[2] == ["我", "在", "学", "Python", "和", "GPT-4", "。"]


def test_seed004_chinese_vocabulary_as_printed_in_the_seed():
    sentences = ["清晨 阳光 透过 窗户 洒 在 书桌 上", "小明 背着 书包 高高兴兴 地 去 学校", "妈妈 在 厨房 里 认真 地 做 早餐"]
    word2idx, idx2word = solution.build_vocab(solution.tokenize(sentences, "zh"))
    printed = {"<PAD>": 0, "<UNK>": 1, "清晨": 2, "阳光": 3, "透过": 4, "窗户": 5, "洒": 6, "在": 7, "书桌": 8, "上": 9,
               "小明": 10, "背着": 11, "书包": 12, "高高兴兴": 13, "地": 14, "去": 15, "学校": 16, "妈妈": 17, "厨房": 18,
               "里": 19, "认真": 20, "做": 21, "早餐": 22}
    assert word2idx == printed and list(word2idx) == list(printed)
    assert idx2word == {i: w for w, i in printed.items()}


@pytest.mark.parametrize("c", spec._VOCAB_CASES, ids=lambda c: c.label)
def test_build_vocab_is_seed004s(c):
    args = spec.vocab_args(c)
    ours, theirs = solution.build_vocab(*args), seed004_build_vocab(*args)
    assert ours == theirs and list(ours[0]) == list(theirs[0])


@pytest.mark.parametrize("c", spec._VOCAB_CASES, ids=lambda c: c.label)
def test_vocab_cases_exercise_min_freq_and_order(c):
    args = spec.vocab_args(c)
    min_freq = args[1] if len(args) > 1 else 1
    counts = Counter(t for s in args[0] for t in s)
    assert min_freq in counts.values(), "a word seen exactly min_freq times (catches freq > min_freq)"
    if min_freq > 1:
        assert min_freq - 1 in counts.values(), "a word seen min_freq - 1 times (catches min_freq ignored)"
    words = [w for w in solution.build_vocab(*args)[0] if w not in ("<PAD>", "<UNK>")]
    assert words != sorted(words)
    assert words != [w for w, f in counts.most_common() if f >= min_freq]


@pytest.mark.parametrize("c", spec._ENCODE_CASES + [spec._EMPTY_ENCODE], ids=lambda c: c.label)
def test_encode_by_hand(c):
    tokenized, word2idx = spec.encode_args(c)
    encoded = solution.encode(tokenized, word2idx)
    assert any(t not in word2idx for s in tokenized for t in s), "the case has unknown words"
    for sentence, ids in zip(tokenized, encoded):
        assert ids.dtype == torch.long and ids.shape == (len(sentence),)
        assert ids.tolist() == [word2idx[t] if t in word2idx else 1 for t in sentence]


@pytest.mark.parametrize("c", spec.CASES + [spec.TIMING, spec._EMPTY_PAD], ids=lambda c: c.label)
def test_pad_batch_is_pad_sequence_batch_first(c):
    encoded, pad_idx = spec.inputs(c)
    ours = solution.pad_batch(encoded, pad_idx)
    theirs = nn.utils.rnn.pad_sequence(encoded, batch_first=True, padding_value=pad_idx)
    assert ours.dtype == torch.long and torch.equal(ours, theirs)
    assert torch.equal(ours, seed004_pad_sequences(encoded, pad_idx))
    assert ours.shape == (c.B, c.T_max)


def test_the_follow_up_cases_hold_an_empty_sentence_and_the_core_cases_none():
    """The empty sentence lives only in the follow-up: code right on every real sentence passes the core."""
    assert [] in spec.encode_args(spec._EMPTY_ENCODE)[0]
    assert 0 in [len(x) for x in spec.inputs(spec._EMPTY_PAD)[0]]
    assert all([] not in spec.encode_args(c)[0] for c in spec._ENCODE_CASES)
    assert all(0 not in [len(x) for x in spec.inputs(c)[0]] for c in spec.CASES)
