"""The hidden parts of the kata `transformer_arithmetic`: checks, statements, Chinese, variants, reference test."""
