"""The hidden parts of the kata `add_norm`: checks, statements, Chinese, variants, reference test."""
