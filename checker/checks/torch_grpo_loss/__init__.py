"""The hidden parts of the kata `grpo_loss`: checks, statements, Chinese, variants, reference test."""
