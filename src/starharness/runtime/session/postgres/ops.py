"""The queued operations of a PostgreSQL session store, in submission order."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ..events import SessionEvent


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
