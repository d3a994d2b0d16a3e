"""How commands fail: one line on stderr and exit code 2, never a traceback."""

from __future__ import annotations

from typing import NoReturn

USAGE_EXIT = 2


class CliError(Exception):
    """A user-facing failure of a command; its message is printed as one line."""


def not_built(command: str, coming_with: str) -> NoReturn:
    """Refuse a command whose implementation arrives with a later issue."""
    raise CliError(f"{command}: not built yet: coming with the {coming_with} issue")


def user_message(exc: BaseException) -> str | None:
    """The one-line message for an error the user can fix, or None for a bug."""
    from starharness.runtime.config import ProfileError
    from starharness.runtime.credentials import CredentialError
    from starharness.runtime.llm.errors import MissingCredentialError

    if isinstance(exc, CliError | ProfileError | CredentialError | MissingCredentialError):
        return " ".join(str(exc).split()) or type(exc).__name__
    return None
