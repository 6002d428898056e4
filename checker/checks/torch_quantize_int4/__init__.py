"""The hidden parts of the kata `quantize_int4`."""
