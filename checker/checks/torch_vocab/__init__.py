"""The hidden parts of the kata `vocab`: checks, statements, Chinese, variants, reference test."""
