"""The hidden parts of the kata `attention_merge`."""
