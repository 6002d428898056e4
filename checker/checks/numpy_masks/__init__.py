"""The hidden parts of the kata `numpy/masks`: checks, statements, Chinese, variants, reference test."""
