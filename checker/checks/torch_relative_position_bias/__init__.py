"""The hidden parts of the kata `relative_position_bias`: checks, statements, Chinese, variants, reference test."""
