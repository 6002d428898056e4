"""The hidden parts of the kata `encoder_layer`: checks, statements, Chinese, variants, reference test."""
