"""The hidden parts of the kata `alibi`: checks, statements, Chinese, variants, reference test."""
