"""The hidden parts of the kata `paged_kv_cache`."""
