"""The hidden parts of the kata `mla`: checks, statements, Chinese, variants, reference test."""
