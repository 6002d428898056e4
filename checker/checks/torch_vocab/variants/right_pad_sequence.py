"""dict.fromkeys for first-appearance order, pad_sequence(batch_first=True), a regex per language."""
import itertools
import re

import torch
from torch import nn



def tokenize(sentences, lang="en"):
    if lang == "zh":
        return [re.findall(r"\S+", s) for s in sentences]
    return [re.findall(r"\w+|[^\w\s]", s.lower()) for s in sentences]


def build_vocab(tokenized, min_freq=1):
    flat = list(itertools.chain.from_iterable(tokenized))
    freq = {}
    for t in flat:
        freq[t] = freq.get(t, 0) + 1
    words = [w for w in dict.fromkeys(flat) if freq[w] >= min_freq]
    itos = ["<PAD>", "<UNK>"] + words
    word2idx = {w: i for i, w in enumerate(itos)}
    return word2idx, dict(enumerate(itos))


def encode(tokenized, word2idx):
    unk = word2idx["<UNK>"]
    return [torch.as_tensor([word2idx.get(t, unk) for t in s], dtype=torch.int64) for s in tokenized]


def pad_batch(encoded, pad_idx=0):
    return nn.utils.rnn.pad_sequence(list(encoded), batch_first=True, padding_value=pad_idx)
