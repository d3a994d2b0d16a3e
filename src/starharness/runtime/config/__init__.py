"""runtime/config."""
