"""The hidden parts of the kata `repetition_penalty`."""
