"""The hidden parts of the kata `swiglu`: checks, statements, Chinese, variants, reference test."""
