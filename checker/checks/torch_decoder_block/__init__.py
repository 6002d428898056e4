"""The hidden parts of the kata `decoder_block`: checks, statements, Chinese, variants, reference test."""
