"""godot."""
