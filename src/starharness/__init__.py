"""star-harness: an LLM brain for game NPCs that cannot cheat."""

__version__ = "0.1.0"
