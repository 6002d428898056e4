"""The hidden parts of the kata `greedy_decode`: checks, statements, Chinese, variants, reference test."""
