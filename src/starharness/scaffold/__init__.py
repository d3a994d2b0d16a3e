"""`star-harness new-game NAME`: a small working game package to copy and change."""

from .new_game import NewGameError, new_game

__all__ = ["NewGameError", "new_game"]
