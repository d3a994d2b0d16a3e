"""Errors of prompt assembly."""


class PromptError(ValueError):
    """A prompt cannot be assembled or registered; the message names the variable or section."""
