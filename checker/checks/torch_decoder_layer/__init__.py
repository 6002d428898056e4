"""The hidden parts of the kata `decoder_layer`: checks, statements, Chinese, variants, reference test."""
