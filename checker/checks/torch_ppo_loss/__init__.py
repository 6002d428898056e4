"""The hidden parts of the kata `ppo_loss`."""
