"""runtime/kernel."""
