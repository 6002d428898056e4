"""The hidden parts of the kata `numpy/transformer_block`: checks, statements, Chinese, variants, reference test."""
