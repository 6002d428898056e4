"""The hidden parts of the kata `selective_scan`."""
