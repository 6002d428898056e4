"""The hidden parts of the kata `stacks`: checks, statements, Chinese, variants, reference test."""
