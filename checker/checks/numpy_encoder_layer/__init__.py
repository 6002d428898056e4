"""The hidden parts of the kata `numpy/encoder_layer`: checks, statements, Chinese, variants, reference test."""
