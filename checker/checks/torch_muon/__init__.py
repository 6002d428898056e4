"""The hidden parts of the kata `muon`."""
