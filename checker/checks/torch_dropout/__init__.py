"""The hidden parts of the kata `dropout`: checks, statements, Chinese, variants, reference test."""
