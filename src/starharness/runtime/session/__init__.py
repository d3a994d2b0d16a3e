"""runtime/session."""
