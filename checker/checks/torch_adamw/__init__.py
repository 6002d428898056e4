"""The hidden parts of the kata `adamw`: checks, statements, Chinese, variants, reference test."""
