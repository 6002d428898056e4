"""The hidden parts of the kata `numpy/layer_norm_backward`: checks, statements, Chinese, variants, reference test."""
