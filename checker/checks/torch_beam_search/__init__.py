"""The hidden parts of the kata `beam_search`: checks, statements, Chinese, variants, reference test."""
