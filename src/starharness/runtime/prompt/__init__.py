"""runtime/prompt."""
