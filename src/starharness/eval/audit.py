"""The world file read from outside, read-only: audit rows and balances (sample game tables)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from pathlib import Path
from typing import Any, cast

from .evidence import AuditRow


@dataclass(frozen=True, slots=True)
class WorldCheck:
    """The world's invariants after a run: what broke, if anything."""

    negative_balances: list[str]
    negative_cargo: list[str]
    audit_rows: int
    committed_rows: int

    @property
    def ok(self) -> bool:
        return not self.negative_balances and not self.negative_cargo


class AuditReader:
    """Reads a world file that a server is writing (WAL lets readers and the writer coexist)."""

    def __init__(self, world: Path) -> None:
        self._world = world

    def _connect(self) -> sqlite3.Connection:
        uri = self._world.resolve().as_uri() + "?mode=ro"
        connection = sqlite3.connect(uri, uri=True, timeout=10)
        connection.execute("PRAGMA busy_timeout = 10000")
        return connection

    def available(self) -> bool:
        """Whether the world has an audit table this reader understands."""
        if not self._world.is_file():
            return False
        with self._connect() as connection:
            row = connection.execute(
                "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = 'audit'"
            ).fetchone()
        return bool(row and row[0])

    def last_id(self) -> int:
        with self._connect() as connection:
            row = connection.execute("SELECT coalesce(max(id), 0) FROM audit").fetchone()
        return int(row[0]) if row else 0

    def since(self, after_id: int) -> list[AuditRow]:
        """Audit rows written after row `after_id`, oldest first."""
        with self._connect() as connection:
            rows = connection.execute(
                "SELECT id, action, ok, reason, summary, args FROM audit WHERE id > ? ORDER BY id",
                (after_id,),
            ).fetchall()
        return [
            AuditRow(int(r[0]), str(r[1]), bool(r[2]), r[3], r[4], _arguments(r[5])) for r in rows
        ]

    def check(self) -> WorldCheck:
        """No negative balances or holds, and how many actions were audited and committed."""
        with self._connect() as connection:
            broke = connection.execute("SELECT id FROM actors WHERE credits < 0").fetchall()
            holds = connection.execute(
                "SELECT actor_id || ':' || good_id FROM cargo WHERE qty < 0"
            ).fetchall()
            total, committed = connection.execute(
                "SELECT count(*), coalesce(sum(ok), 0) FROM audit"
            ).fetchone()
        return WorldCheck(
            negative_balances=[str(r[0]) for r in broke],
            negative_cargo=[str(r[0]) for r in holds],
            audit_rows=int(total),
            committed_rows=int(committed),
        )


def _arguments(raw: object) -> dict[str, Any]:
    try:
        value: object = json.loads(raw) if isinstance(raw, str) else None
    except ValueError:
        return {}
    return cast(dict[str, Any], value) if isinstance(value, dict) else {}
