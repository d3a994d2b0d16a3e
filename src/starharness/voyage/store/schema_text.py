"""schema.sql, the one text both stores create their tables from, and its version."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from importlib import resources
from typing import Final

from .errors import SchemaVersionError

APPLICATION_ID = 0x4F4D4547
"""Stamped into the SQLite header ("OMEG") so a foreign file is recognised as such."""
SCHEMA_VERSION = 4
"""Bump whenever schema.sql changes; a newer world is refused with a clear error, an older one
is upgraded in place when `UPGRADES` covers every step, else refused."""

UPGRADES: Final[Mapping[int, tuple[str, ...]]] = {
    2: ("CREATE INDEX IF NOT EXISTS audit_by_action_day ON audit (action, day)",),
    # Witnesses and gossip: what a memory weighs, where it came from, how often it was retold.
    3: (
        "ALTER TABLE memories ADD COLUMN importance INTEGER NOT NULL DEFAULT 10"
        " CHECK (importance BETWEEN 0 AND 100)",
        "ALTER TABLE memories ADD COLUMN source_id TEXT",
        "ALTER TABLE memories ADD COLUMN hops INTEGER NOT NULL DEFAULT 0 CHECK (hops >= 0)",
        "ALTER TABLE memories ADD COLUMN origin_id INTEGER",
        "CREATE INDEX IF NOT EXISTS memories_by_origin ON memories (origin_id)",
        "CREATE INDEX IF NOT EXISTS memories_by_npc ON memories (npc_id, id)",
    ),
}
"""Statements that take a world at version N to N + 1 in place, losing nothing (both stores
run them as written, so they stay plain SQL)."""

_GAME_PACKAGE = __name__.rsplit(".", 2)[0]
"""The game package this store belongs to (the parent of `store`)."""


def schema_statements() -> list[str]:
    """schema.sql split into statements (executescript would commit our open transaction)."""
    # Relative to this game's package, so a copied game reads its own schema.sql.
    text = resources.files(_GAME_PACKAGE).joinpath("schema.sql").read_text("utf-8")
    statements: list[str] = []
    pending: list[str] = []
    for line in text.splitlines():
        pending.append(line)
        chunk = "\n".join(pending)
        if sqlite3.complete_statement(chunk):
            statements.append(chunk)
            pending = []
    leftover = [line for line in pending if line.strip() and not line.strip().startswith("--")]
    if leftover:
        raise SchemaVersionError(f"schema.sql ends with an incomplete statement: {leftover[0]!r}")
    return statements


def upgrade_statements(version: int) -> list[str] | None:
    """What takes a world at `version` to SCHEMA_VERSION, in order; None when a step is missing."""
    statements: list[str] = []
    for step in range(version, SCHEMA_VERSION):
        found = UPGRADES.get(step)
        if found is None:
            return None
        statements.extend(found)
    return statements
