"""The hidden parts of the kata `sliding_window`: checks, statements, Chinese, variants, reference test."""
