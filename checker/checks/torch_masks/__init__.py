"""The hidden parts of the kata `masks`: checks, statements, Chinese, variants, reference test."""
