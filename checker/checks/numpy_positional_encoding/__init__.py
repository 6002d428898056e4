"""The hidden parts of the kata `numpy/positional_encoding`: checks, statements, Chinese, variants, reference test."""
