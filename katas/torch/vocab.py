r"""Tokenize, build a vocabulary with <PAD> and <UNK>, encode, pad a batch.

Shape legend:
    B      number of sentences in the batch
    T_i    number of tokens of sentence i
    T_max  max_i T_i, the length of the longest sentence

Write four functions (the PyTorch notebook tutorial's first section, for English and for Chinese):

    tokenize(sentences, lang="en")       list of B str -> list of B lists of str (tokens)
        "en": lowercase, then a token is a run of word characters or ONE punctuation mark:
              re.findall(r"\w+|[^\w\s]", sentence.lower())
              "Don't panic!" -> ["don", "'", "t", "panic", "!"];  "..." -> [".", ".", "."]
        "zh": the sentences come already segmented with spaces (the PyTorch notebook tutorial uses jieba, which is
              not installed here): split on runs of whitespace, sentence.split(), nothing else
              (no lowercasing; "，" is a token like any other). An empty sentence gives [].
    build_vocab(tokenized, min_freq=1)   -> (word2idx, idx2word)
        word2idx: dict {word: index}: "<PAD>" = 0, "<UNK>" = 1, then every word seen at least
                  min_freq times (freq >= min_freq) in the whole corpus, taking indices 2, 3, ...
                  in order of FIRST APPEARANCE (sentence by sentence, left to right).
        idx2word: dict {index: word}, the exact inverse of word2idx (int keys).
    encode(tokenized, word2idx)          -> list of B LongTensors (T_i,)
        One int64 tensor per sentence, one id per token; a word not in word2idx gets the
        index of "<UNK>". An empty sentence gives an empty LongTensor of shape (0,).
    pad_batch(encoded, pad_idx=0)        B LongTensors (T_i,) -> LongTensor (B, T_max)
        Row i is sentence i's ids followed by pad_idx up to T_max: padding on the RIGHT,
        [5, 8, 2, PAD, PAD], as make_pad_mask and the causal mask expect.

Rules: do not modify the lists, dicts or tensors you are given.
"""

import re
from collections import Counter

import torch
from torch import Tensor


def tokenize(sentences: list[str], lang: str = "en") -> list[list[str]]:
    """English: lowercase, words and punctuation marks; "zh": split on whitespace."""
    raise NotImplementedError("write tokenize")


def build_vocab(tokenized: list[list[str]], min_freq: int = 1) -> tuple[dict[str, int], dict[int, str]]:
    """word2idx = {<PAD>: 0, <UNK>: 1, words seen >= min_freq times in order of first appearance}, idx2word."""
    raise NotImplementedError("write build_vocab")


def encode(tokenized: list[list[str]], word2idx: dict[str, int]) -> list[Tensor]:
    """One LongTensor (T_i,) per sentence; unknown words get word2idx["<UNK>"]."""
    raise NotImplementedError("write encode")


def pad_batch(encoded: list[Tensor], pad_idx: int = 0) -> Tensor:
    """B LongTensors (T_i,) -> LongTensor (B, T_max), padded on the RIGHT with pad_idx."""
    raise NotImplementedError("write pad_batch")
