"""Errors of the session log and its stores."""

from __future__ import annotations

from ..errors import StarHarnessError, UserFacingError


class SessionError(StarHarnessError):
    """Base of the session errors."""


class SessionNotFoundError(SessionError, LookupError):
    """No live or stored session has this id."""


class SessionExistsError(SessionError):
    """A session with this id already exists (live or stored); resume it instead."""


class SessionClosedError(SessionError):
    """The session was closed; nothing more can be appended to it."""


class StoreError(SessionError):
    """A session store failed."""


class StoreFormatError(StoreError, UserFacingError):
    """The file is not ours, or of a schema this build does not read; it is left untouched."""


class StoreClosedError(StoreError):
    """The store was closed."""


class StoreWriteError(StoreError):
    """Events could not be written to the store."""


class StoreUnreachableError(StoreError, UserFacingError):
    """The store's server cannot be reached or logged into (address, password, permissions)."""


class SessionCorruptError(StoreError):
    """A stored log is damaged before its last write: dropping a torn tail cannot recover it."""


class StoredEventError(StoreError, UserFacingError):
    """A stored event's data does not fit its type's TypedDict (names the session, the event,
    its type and the field); the log was written by another build, or changed outside this one.
    Commands print it as one line, like StoreFormatError."""
