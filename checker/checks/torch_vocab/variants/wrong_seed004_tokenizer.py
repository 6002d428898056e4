# expect: you delete punctuation like the PyTorch notebook tutorial
"""Seed 004's tokenizer: lowercase, delete . , ; ! ? and split on whitespace."""
import re
from collections import Counter

import torch

TOKEN = re.compile(r"\w+|[^\w\s]")


def tokenize(sentences, lang="en"):
    out = []
    for s in sentences:
        if lang != "zh":
            s = s.lower().replace(".", "").replace(",", "").replace(";", "").replace("!", "").replace("?", "")
        out.append(s.split())
    return out


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
    T_max = max(len(s) for s in encoded)
    out = torch.full((len(encoded), T_max), pad_idx, dtype=torch.long)
    for i, s in enumerate(encoded):
        out[i, :len(s)] = s
    return out
