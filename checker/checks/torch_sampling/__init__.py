"""The hidden parts of the kata `sampling`: checks, statements, Chinese, variants, reference test."""
