"""The hidden parts of the kata `tensor_parallel_mlp`."""
