"""Byte-level byte-pair encoding (BPE), as GPT-2 and minbpe tokenize: learn merges, encode, decode.

Legend (no tensors: Python lists and ints):
    text     a str (any Unicode: English, Chinese, emoji, whitespace runs)
    chunk    a piece of text from pretokenize(text) (given below): a word with its leading space,
             or a run of whitespace. Chunks are never merged together: BPE works INSIDE each chunk.
    id       an int token id. 0..255 are the 256 single bytes (byte value = id);
             256 + r is the token made by merge number r (r = 0, 1, ...).
    merges   list[tuple[int, int]]: merges[r] = (left id, right id), in the order they were learned.

train_bpe(text, num_merges) -> merges
    1) chunks = pretokenize(text); each chunk becomes its UTF-8 bytes, a list of ids 0..255.
    2) Repeat num_merges times:
       - count every adjacent pair of ids inside every chunk, each occurrence once: the chunk
         [a, a, a] holds the pair (a, a) TWICE (positions 0-1 and 1-2), as Sennrich et al. and minbpe count;
       - take the most frequent pair. Tie-breaking rule: among pairs with the same count, the
         smallest pair, comparing (left id, right id) as a tuple: (32, 97) before (97, 98) before (97, 99);
       - give it the id 256 + r, and replace its occurrences in every chunk LEFT TO RIGHT without
         overlap: [a, a, a] with the merge (a, a) -> X becomes [X, a].
       Stop early when no chunk has two ids left (no pair to count): the result may be shorter.

encode(text, merges) -> list[int]
    For each chunk: its bytes, then repeatedly merge the pair present in the chunk with the LOWEST
    rank r (the earliest learned), all its occurrences left to right, until no pair of the chunk
    is in merges. The ids of the chunks, concatenated. merges may be any list of pairs (not
    only one train_bpe returned).

decode(ids, merges) -> str
    Each id stands for a byte string: bytes([id]) below 256, and for 256 + r the bytes of
    merges[r]'s left token followed by those of its right token. Join the BYTES of all ids, then
    decode UTF-8 once with errors="replace" (one token may hold half of a Chinese character;
    bytes that are not valid UTF-8 become U+FFFD).

decode(encode(s, merges), merges) == s for every str s.

Do not modify the merges you are given. Off limits: tiktoken, tokenizers, sentencepiece, transformers.
"""

import re

# GPT-2's pre-tokenizer, simplified: a word with its leading space, or a run of whitespace.
# Given (part of the contract): "".join(pretokenize(text)) == text.
PATTERN = re.compile(r" ?\S+|\s+(?!\S)|\s+")


def pretokenize(text: str) -> list[str]:
    """'hello  world' -> ['hello', ' ', ' world']: the chunks BPE works inside."""
    return PATTERN.findall(text)


def train_bpe(text: str, num_merges: int) -> list[tuple[int, int]]:
    raise NotImplementedError("write train_bpe: count pairs inside chunks, merge the most frequent, repeat")


def encode(text: str, merges: list[tuple[int, int]]) -> list[int]:
    raise NotImplementedError("write encode: bytes of each chunk, then merges by rank")


def decode(ids: list[int], merges: list[tuple[int, int]]) -> str:
    raise NotImplementedError("write decode: bytes of every id joined, then UTF-8")
