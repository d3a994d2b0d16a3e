"""Errors of prompt assembly."""

from ..errors import StarHarnessError


class PromptError(StarHarnessError, ValueError):
    """A prompt cannot be assembled or registered; the message names the variable or section."""
