"""The hidden parts of the kata `numpy/softmax_backward`: checks, statements, Chinese, variants, reference test."""
