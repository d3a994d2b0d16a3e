"""mockllm."""
