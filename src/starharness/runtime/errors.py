"""The root of every error star-harness raises on purpose, and the ones a user can fix."""

from __future__ import annotations


class StarHarnessError(Exception):
    """Root of star-harness's own exceptions: `except StarHarnessError` catches ours only."""


class UserFacingError(StarHarnessError):
    """A failure the user can fix (a profile, a flag, a missing key): commands print its
    message as one line and exit 2, never a traceback."""
