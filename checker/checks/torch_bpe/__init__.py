"""The hidden parts of the kata `bpe`: checks, statements, Chinese, variants, reference test."""
