"""voyage."""
