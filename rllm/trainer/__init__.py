"""Training: the verl plugin for multi-GPU clusters and a single-device GRPO loop."""
