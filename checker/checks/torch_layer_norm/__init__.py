"""The hidden parts of the kata `layer_norm`: checks, statements, Chinese, variants, reference test."""
