"""The game's lore in the world's own database: an FTS5 table in the SQLite file, a `tsvector`
column with a GIN index in PostgreSQL (the framework's `npc.lore` index, over our drivers).

It is derived from the declaration (`content.lore.LORE`), not world state: every open makes
it match the declaration (a digest says when it already does), so it needs no schema version.
"""

from __future__ import annotations

import sqlite3

from starharness.npc.lore import install_lore, lore_is_current

from ..content.lore import LORE
from .driver import Driver
from .sqlite_conn import SqliteDriver, write_transaction


def install_sqlite_lore(conn: sqlite3.Connection) -> None:
    """Make the file's lore index hold the game's lore (one read when it already does)."""
    driver = SqliteDriver(conn)
    if lore_is_current(driver, LORE):
        return
    with write_transaction(conn):
        install_lore(driver, LORE)


def install_world_lore(driver: Driver) -> None:
    """The same inside a write transaction already open (PostgreSQL's creation or check)."""
    install_lore(driver, LORE)
