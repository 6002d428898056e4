"""The hidden parts of the kata `feed_forward`: checks, statements, Chinese, variants, reference test."""
