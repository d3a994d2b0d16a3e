"""Reads of an NPC's memories of someone: per pair, on the pair's index."""

from __future__ import annotations

from typing import Any

from .driver import Driver
from .errors import TransactionStateError
from .rows import Memory

Row = tuple[Any, ...]
Params = tuple[Any, ...]

MEMORY_COLUMNS = (
    "id, npc_id, about_id, day, kind, text, action, good_id, qty, price, ref, weight, "
    "importance, source_id, hops, origin_id"
)
"""What `memory_row` reads, in its order."""


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
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE npc_id = ? AND about_id = ? ORDER BY id",
            (npc_id, about_id),
        )
        return [memory_row(row) for row in rows]

    def tellable(self, npc_id: str, least: int, limit: int) -> list[Memory]:
        """The NPC's newest single (unfolded) memories about players of at least `least`
        importance, newest first: what it might pass on."""
        rows = self._rows(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE npc_id = ? AND weight = 1 "
            "AND importance >= ? AND about_id IN (SELECT id FROM actors WHERE kind = 'player') "
            "ORDER BY id DESC LIMIT ?",
            (npc_id, least, limit),
        )
        return [memory_row(row) for row in rows]

    def holders(self, origins: set[int]) -> dict[str, set[int]]:
        """Who holds each of these happenings: its first memory, or one stemming from it."""
        if not origins:
            return {}
        ids = sorted(origins)
        marks = ",".join("?" * len(ids))
        rows = self._rows(
            f"SELECT npc_id, coalesce(origin_id, id) FROM memories "
            f"WHERE id IN ({marks}) OR origin_id IN ({marks})",
            (*ids, *ids),
        )
        known: dict[str, set[int]] = {}
        for npc_id, origin in rows:
            known.setdefault(str(npc_id), set()).add(int(origin))
        return known

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


def memory_row(row: Row) -> Memory:
    """A Memory from a row of MEMORY_COLUMNS."""
    # Positional and with the None checks inline: a scene reads a dozen of these.
    action, good_id, qty, price, ref = row[6], row[7], row[8], row[9], row[10]
    source_id, origin_id = row[13], row[15]
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
        int(row[12]),
        None if source_id is None else str(source_id),
        int(row[14]),
        None if origin_id is None else int(origin_id),
    )
