"""The hidden parts of the kata `numpy/attention_backward`: checks, statements, Chinese, variants, reference test."""
