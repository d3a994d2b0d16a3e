"""runtime/tools."""
