"""The errors commands raise themselves; every user-facing error roots in the runtime's."""

from __future__ import annotations

from .runtime.errors import StarHarnessError, UserFacingError

__all__ = ["CliError", "StarHarnessError", "UserFacingError"]


class CliError(UserFacingError):
    """A command's own failure (a bad flag, folder or combination); printed as one line."""
