"""The hidden parts of the kata `flash_attention`: checks, statements, Chinese, variants, reference test."""
