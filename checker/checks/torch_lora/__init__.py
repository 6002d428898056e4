"""The hidden parts of the kata `lora`: checks, statements, Chinese, variants, reference test."""
