"""The hidden parts of the kata `rope_scaling`."""
