"""What a batched session store queues (in submission order) and the queue half of its API."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from .events import SessionEvent
from .sqlite.writer import BatchWriter


@dataclass(frozen=True, slots=True)
class Create:
    session_id: str
    created_at: int
    meta: Mapping[str, Any]


@dataclass(frozen=True, slots=True)
class Append:
    session_id: str
    event: SessionEvent


@dataclass(frozen=True, slots=True)
class Delete:
    session_id: str


@dataclass(frozen=True, slots=True)
class Prune:
    keep: int
    protect: frozenset[str]


Op = Create | Append | Delete | Prune


def describe(op: Op) -> str:
    """The operation in words, for a refused write's report."""
    if isinstance(op, Append):
        return f"{op.event.type} #{op.event.seq} of session {op.session_id!r}"
    if isinstance(op, Create):
        return f"creating session {op.session_id!r}"
    if isinstance(op, Delete):
        return f"deleting session {op.session_id!r}"
    return "pruning sessions"


class QueuedWrites(ABC):
    """Writes are queued in O(1) on the caller's thread; a `BatchWriter` thread writes them."""

    _writer: BatchWriter[Op]

    @abstractmethod
    def _check_open(self) -> None:
        """Raise StoreClosedError once the store is closed."""

    @property
    def pending(self) -> int:
        """Queued operations not written yet."""
        return self._writer.pending

    def create(self, session_id: str, created_at: int, meta: Mapping[str, Any]) -> None:
        self._writer.submit(Create(session_id, created_at, meta))

    def append(self, session_id: str, event: SessionEvent) -> None:
        self._writer.submit(Append(session_id, event))

    def delete(self, session_id: str) -> None:
        self._writer.submit(Delete(session_id))

    def prune(self, keep: int, protect: Collection[str]) -> None:
        self._writer.submit(Prune(keep, frozenset(protect)))

    def write_soon(self) -> None:
        self._check_open()
        self._writer.kick()

    async def flush(self) -> None:
        self._check_open()
        await self._writer.flush()
