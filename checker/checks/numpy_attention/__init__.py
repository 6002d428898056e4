"""The hidden parts of the kata `numpy/attention`: checks, statements, Chinese, variants, reference test."""
