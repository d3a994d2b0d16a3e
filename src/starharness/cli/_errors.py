"""How commands fail: one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

from ..errors import CliError, UserFacingError

__all__ = ["USAGE_EXIT", "CliError", "user_message"]

USAGE_EXIT = 2


def user_message(exc: BaseException) -> str | None:
    """The one-line message for an error the user can fix, or None for a bug."""
    if isinstance(exc, UserFacingError):
        return " ".join(str(exc).split()) or type(exc).__name__
    return None
