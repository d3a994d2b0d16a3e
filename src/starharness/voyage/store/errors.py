"""Faults of the world store. Guards refuse with values; these mean an action must roll back."""

from __future__ import annotations

from starharness.runtime import StarHarnessError


class WorldError(StarHarnessError):
    """Base class for every world store fault."""


class SchemaVersionError(WorldError):
    """The file is not an Omega station world, or a newer or older one than this code knows."""


class WorldBusyError(WorldError):
    """The world stayed busy: a writer held SQLite past the busy timeout, or every attempt of an
    action on PostgreSQL conflicted with other writers."""


class WorldConflictError(WorldBusyError):
    """A PostgreSQL transaction conflicted with another (serialization failure or deadlock);
    `VoyageWorld.run_action` re-runs the whole action, a bare `transaction()` does not."""


class TransactionStateError(WorldError):
    """A transaction was used after it ended, or opened inside another one."""


class UnknownEntityError(WorldError, LookupError):
    """An id names no actor, good, location, quest or intel item."""

    def __init__(self, kind: str, entity_id: str) -> None:
        super().__init__(f"no {kind} with id {entity_id!r}")
        self.kind = kind
        self.entity_id = entity_id


class InsufficientError(WorldError):
    """A write would take more than there is; nothing was written."""

    def __init__(self, message: str, *, have: int, need: int) -> None:
        super().__init__(message)
        self.have = have
        self.need = need


class InsufficientCreditsError(InsufficientError):
    """An actor would go below zero credits."""


class InsufficientCargoError(InsufficientError):
    """An actor's hold would go below zero units of a good."""


class InsufficientStockError(InsufficientError):
    """A market would go below zero stock."""
