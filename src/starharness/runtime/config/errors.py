"""Errors of profile loading and start-up: one line that names the row, file or field."""

from __future__ import annotations

from ..errors import UserFacingError


class ProfileError(UserFacingError):
    """A profile, bundle or patch is wrong, or a plugin could not be loaded or started."""

    def __init__(self, message: str) -> None:
        super().__init__(one_line(message))


class PluginStartError(ProfileError):
    """A plugin's `setup` raised; the rows already started were disposed again."""


def one_line(text: str) -> str:
    """Fold a possibly multi-line message into one line (CLI errors are single lines)."""
    parts = [line.strip() for line in text.splitlines() if line.strip()]
    return "; ".join(parts)
