"""The hidden parts of the kata `rope`: checks, statements, Chinese, variants, reference test."""
