"""The hidden parts of the kata `numpy/multi_head_attention`: checks, statements, Chinese, variants, reference test."""
