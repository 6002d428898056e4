"""The hidden parts of the kata `numpy/decoder_layer`: checks, statements, Chinese, variants, reference test."""
