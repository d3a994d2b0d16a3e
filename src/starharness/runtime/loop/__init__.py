"""runtime/loop."""
