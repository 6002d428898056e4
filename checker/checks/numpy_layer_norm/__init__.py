"""The hidden parts of the kata `numpy/layer_norm`: checks, statements, Chinese, variants, reference test."""
