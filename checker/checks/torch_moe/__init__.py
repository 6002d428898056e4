"""The hidden parts of the kata `moe`: checks, statements, Chinese, variants, reference test."""
