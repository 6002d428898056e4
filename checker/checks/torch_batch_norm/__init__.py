"""The hidden parts of the kata `batch_norm`: checks, statements, Chinese, variants, reference test."""
