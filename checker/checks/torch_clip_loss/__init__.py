"""The hidden parts of the kata `clip_loss`."""
