"""The hidden parts of the kata `linear_attention`: checks, statements, Chinese, variants, reference test."""
