"""The hidden parts of the kata `reward_model_loss`."""
