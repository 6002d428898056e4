"""The hidden parts of the kata `numpy/feed_forward`: checks, statements, Chinese, variants, reference test."""
