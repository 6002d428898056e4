"""The hidden parts of the kata `speculative_decoding`: checks, statements, Chinese, variants, reference test."""
