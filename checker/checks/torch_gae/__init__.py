"""The hidden parts of the kata `gae`."""
