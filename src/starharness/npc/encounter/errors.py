"""Errors raised while resolving a game's declarations."""

from __future__ import annotations

from ...runtime.errors import StarHarnessError


class GameDefinitionError(StarHarnessError, ValueError):
    """A Game object cannot be served as declared; the message says what to change."""
