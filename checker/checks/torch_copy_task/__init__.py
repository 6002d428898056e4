"""The hidden parts of the kata `copy_task`: checks, statements, Chinese, variants, reference test."""
