# expect: batch_first=True
"""pad_sequence without batch_first=True: the batch comes out (T_max, B)."""
import re
from collections import Counter

import torch
from torch import nn

TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(sentences, lang="en"):
    return [s.split() if lang == "zh" else TOKEN.findall(s.lower()) for s in sentences]


def build_vocab(tokenized, min_freq=1):
    counts = Counter(t for s in tokenized for t in s)
    word2idx = {"<PAD>": 0, "<UNK>": 1}
    for w, f in counts.items():
        if f >= min_freq:
            word2idx[w] = len(word2idx)
    return word2idx, {i: w for w, i in word2idx.items()}


def encode(tokenized, word2idx):
    return [torch.tensor([word2idx.get(t, word2idx["<UNK>"]) for t in s], dtype=torch.long) for s in tokenized]


def pad_batch(encoded, pad_idx=0):
    return nn.utils.rnn.pad_sequence(encoded, padding_value=pad_idx)
