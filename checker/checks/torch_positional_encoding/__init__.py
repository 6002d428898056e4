"""The hidden parts of the kata `positional_encoding`: checks, statements, Chinese, variants, reference test."""
