"""The hidden parts of the kata `kv_cache`: checks, statements, Chinese, variants, reference test."""
