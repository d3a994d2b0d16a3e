"""schema.sql, the one text both stores create their tables from, and its version."""

from __future__ import annotations

import sqlite3
from importlib import resources

from .errors import SchemaVersionError

APPLICATION_ID = 0x4F4D4547
"""Stamped into the SQLite header ("OMEG") so a foreign file is recognised as such."""
SCHEMA_VERSION = 2
"""Bump whenever schema.sql changes; older and newer worlds are refused with a clear error."""

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
