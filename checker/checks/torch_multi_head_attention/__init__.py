"""The hidden parts of the kata `multi_head_attention`: checks, statements, Chinese, variants, reference test."""
