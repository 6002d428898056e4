"""The hidden parts of the kata `noam_schedule`: checks, statements, Chinese, variants, reference test."""
