"""The hidden parts of the kata `numpy/linear_backward`: checks, statements, Chinese, variants, reference test."""
