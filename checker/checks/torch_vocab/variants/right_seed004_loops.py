"""Seed 004's loops (counting by hand, a loop that pads row by row), with the kata's tokenizer."""
import re

import torch


def tokenize(sentences, lang="en"):
    out = []
    for sent in sentences:
        if lang == "zh":
            out.append(sent.split())
        else:
            out.append(re.findall(r"\w+|\S", sent.lower()))  # \S after \w+: a single punctuation mark
    return out


def build_vocab(tokenized, min_freq=1):
    counts = {}
    for sent in tokenized:
        for tok in sent:
            counts[tok] = counts.get(tok, 0) + 1  # a dict keeps the order of first insertion
    vocab = {"<PAD>": 0, "<UNK>": 1}
    for word in counts:
        if counts[word] >= min_freq:
            vocab[word] = len(vocab)
    inv_vocab = {}
    for word, idx in vocab.items():
        inv_vocab[idx] = word
    return vocab, inv_vocab


def encode(tokenized, word2idx):
    encoded = []
    for tokens in tokenized:
        ids = []
        for tok in tokens:
            ids.append(word2idx[tok] if tok in word2idx else word2idx["<UNK>"])
        encoded.append(torch.tensor(ids, dtype=torch.long))
    return encoded


def pad_batch(encoded, pad_idx=0):
    max_seq_len = max([len(seq) for seq in encoded])
    padded = torch.full((len(encoded), max_seq_len), pad_idx, dtype=torch.long)
    for i, seq in enumerate(encoded):
        padded[i, :len(seq)] = seq
    return padded
