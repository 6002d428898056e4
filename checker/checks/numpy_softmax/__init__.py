"""The hidden parts of the kata `numpy/softmax`: checks, statements, Chinese, variants, reference test."""
