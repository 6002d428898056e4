"""The hidden parts of the kata `dpo_loss`: checks, statements, Chinese, variants, reference test."""
