"""The hidden parts of the kata `numpy/add_and_norm`: checks, statements, Chinese, variants, reference test."""
