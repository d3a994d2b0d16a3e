"""Reads of an NPC's memories of someone: per pair, on the pair's index."""

from __future__ import annotations

from typing import Any

from .driver import Driver
from .errors import TransactionStateError
from .rows import Memory

Row = tuple[Any, ...]
Params = tuple[Any, ...]


class MemoryReads:
    """The reading core of WorldReader (one connection, ended with the transaction) and the
    memory reads."""

    def __init__(self, conn: Driver, owner: object) -> None:
        self._conn = conn
        self._open = True
        self.owner = owner
        """The World this transaction or snapshot belongs to."""

    def end(self) -> None:
        """Mark the transaction or snapshot as over; any later use raises."""
        self._open = False

    def _rows(self, sql: str, params: Params = ()) -> list[Row]:
        if not self._open:
            raise TransactionStateError("this transaction has ended; open a new one")
        return self._conn.rows(sql, params)

    def _row(self, sql: str, params: Params = ()) -> Row | None:
        rows = self._rows(sql, params)
        return rows[0] if rows else None

    # memories

    def memories(self, npc_id: str, about_id: str) -> list[Memory]:
        """Everything the NPC remembers about someone, oldest first."""
        rows = self._rows(
            "SELECT id, npc_id, about_id, day, kind, text, action, good_id, qty, price, ref, "
            "weight FROM memories WHERE npc_id = ? AND about_id = ? ORDER BY id",
            (npc_id, about_id),
        )
        return [_memory(row) for row in rows]

    def count_memories(
        self, npc_id: str, about_id: str, *, kind: str | None = None, ref: str | None = None
    ) -> int:
        """How many memories match, e.g. whether a piece of intel was already sold."""
        sql = "SELECT coalesce(sum(weight), 0) FROM memories WHERE npc_id = ? AND about_id = ?"
        params: list[Any] = [npc_id, about_id]
        for column, value in (("kind", kind), ("ref", ref)):
            if value is not None:
                sql += f" AND {column} = ?"
                params.append(value)
        row = self._row(sql, tuple(params))
        return int(row[0]) if row else 0


def _memory(row: Row) -> Memory:
    # Positional and with the None checks inline: a scene reads a dozen of these.
    action, good_id, qty, price, ref = row[6], row[7], row[8], row[9], row[10]
    return Memory(
        int(row[0]),
        str(row[1]),
        str(row[2]),
        int(row[3]),
        str(row[4]),
        str(row[5]),
        None if action is None else str(action),
        None if good_id is None else str(good_id),
        None if qty is None else int(qty),
        None if price is None else int(price),
        None if ref is None else str(ref),
        int(row[11]),
    )
