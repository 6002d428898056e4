"""The hidden parts of the kata `attention`: checks, statements, Chinese, variants, reference test."""
