"""runtime/llm."""
