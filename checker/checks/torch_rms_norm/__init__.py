"""The hidden parts of the kata `rms_norm`: checks, statements, Chinese, variants, reference test."""
