"""The hidden parts of the kata `cross_entropy`: checks, statements, Chinese, variants, reference test."""
