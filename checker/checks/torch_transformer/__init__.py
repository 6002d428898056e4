"""The hidden parts of the kata `transformer`: checks, statements, Chinese, variants, reference test."""
