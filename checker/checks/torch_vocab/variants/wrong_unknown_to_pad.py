# expect: the index of <PAD>
"""encode sends unknown words to 0, the PAD id."""
import re
from collections import Counter

import torch
from torch import Tensor

PAD, UNK = "<PAD>", "<UNK>"
TOKEN = re.compile(r"\w+|[^\w\s]")  # a run of word characters, or one punctuation mark


def tokenize(sentences: list[str], lang: str = "en") -> list[list[str]]:
    """English: lowercase, then words and punctuation marks; "zh": already segmented, split on whitespace."""
    if lang == "zh":
        return [s.split() for s in sentences]
    return [TOKEN.findall(s.lower()) for s in sentences]


def build_vocab(tokenized: list[list[str]], min_freq: int = 1) -> tuple[dict[str, int], dict[int, str]]:
    """word2idx = {<PAD>: 0, <UNK>: 1, then words seen >= min_freq times, in order of first appearance}."""
    # 1) count every token; a Counter keeps the order in which tokens were first seen
    counts = Counter(token for sentence in tokenized for token in sentence)
    # 2) the special tokens first, then the frequent words, each taking the next free index
    word2idx = {PAD: 0, UNK: 1}
    for word, freq in counts.items():
        if freq >= min_freq:
            word2idx[word] = len(word2idx)
    # 3) the inverse mapping
    idx2word = {idx: word for word, idx in word2idx.items()}
    return word2idx, idx2word


def encode(tokenized: list[list[str]], word2idx: dict[str, int]) -> list[Tensor]:
    """One LongTensor (T_i,) per sentence; unknown words get the index of <UNK>."""
    return [torch.tensor([word2idx.get(token, 0) for token in sentence], dtype=torch.long)
            for sentence in tokenized]


def pad_batch(encoded: list[Tensor], pad_idx: int = 0) -> Tensor:
    """B LongTensors (T_i,) -> LongTensor (B, T_max), each row padded on the RIGHT with pad_idx."""
    T_max = max(len(seq) for seq in encoded)
    batch = torch.full((len(encoded), T_max), pad_idx, dtype=torch.long)  # (B, T_max), all PAD
    lengths = torch.tensor([len(seq) for seq in encoded])  # (B,)
    keep = torch.arange(T_max) < lengths[:, None]  # (B, T_max): True where a real token goes
    batch[keep] = torch.cat(list(encoded))  # fills row by row: sentence 0's tokens, then sentence 1's ...
    return batch
