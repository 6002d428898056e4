"""Parent-side helpers that several check modules share: checks written once, and the parts
their named mistakes are built from. Nothing here runs in the child."""
