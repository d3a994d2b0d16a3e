"""The world in a SQLite file: connection settings, transactions, and the schema version check."""

from __future__ import annotations

import logging
import re
import sqlite3
from collections.abc import Generator, Iterable
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from starharness.runtime import create_owner_only

from .driver import Dialect, Params, Row
from .errors import SchemaVersionError, TransactionStateError, WorldBusyError, WorldError
from .schema_text import APPLICATION_ID, SCHEMA_VERSION, schema_statements, upgrade_statements

DEFAULT_BUSY_TIMEOUT_S = 5.0
_log = logging.getLogger("starharness.voyage.store")

ANY_TABLE = "*"
"""What `written_table` names for a statement that may write any table (it cannot tell)."""

_WRITE = re.compile(
    r"\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|REPLACE\s+INTO|UPDATE(?:\s+OR\s+\w+)?|DELETE\s+FROM)"
    r'\s+"?(\w+)"?[\s(]',
    re.IGNORECASE,
)
_READ = re.compile(r"\s*SELECT\s", re.IGNORECASE)
_KNOWN: dict[str, str | None] = {}
"""Statements already classified; the store's SQL is a few dozen constant strings."""


def written_table(sql: str) -> str | None:
    """The table a statement writes; None for a plain SELECT, ANY_TABLE when it cannot tell."""
    if sql in _KNOWN:
        return _KNOWN[sql]
    if found := _WRITE.match(sql):
        table: str | None = found[1].lower()
    elif _READ.match(sql):
        table = None
    else:
        table = ANY_TABLE  # a PRAGMA, DDL, a WITH ... write: count it as touching everything
    if len(_KNOWN) < 1024:  # statements built per call (IN lists) must not grow it forever
        _KNOWN[sql] = table
    return table


class SqliteDriver:
    """The Driver over one sqlite3 connection (the World serialises its use with a lock).

    Inside a write transaction (`written` is a set) it notes the tables each statement writes.
    """

    def __init__(self, conn: sqlite3.Connection) -> None:
        self.conn = conn
        self.written: set[str] | None = None

    @property
    def dialect(self) -> Dialect:
        return "sqlite"

    def rows(self, sql: str, params: Params = ()) -> list[Row]:
        written = self.written
        if written is not None and (table := written_table(sql)) is not None:
            written.add(table)  # before running it: a failing statement may have written some
        return self.conn.execute(sql, tuple(params)).fetchall()

    def many(self, sql: str, seq: Iterable[Params]) -> None:
        written = self.written
        if written is not None and (table := written_table(sql)) is not None:
            written.add(table)
        self.conn.executemany(sql, [tuple(params) for params in seq])


@dataclass(frozen=True, slots=True)
class FileState:
    """What the header and catalogue of a database say about it."""

    application_id: int
    user_version: int
    table_count: int

    @property
    def is_empty(self) -> bool:
        return self.application_id == 0 and self.user_version == 0 and self.table_count == 0


def connect(path: Path, busy_timeout_s: float = DEFAULT_BUSY_TIMEOUT_S) -> sqlite3.Connection:
    """A connection in autocommit mode (we issue BEGIN ourselves), WAL, foreign keys on."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        create_owner_only(path)  # the world holds every player's state: not for other users
        # The World serialises use of its connection with a lock, so any thread may hold it.
        conn = sqlite3.connect(
            path, isolation_level=None, check_same_thread=False, timeout=busy_timeout_s
        )
    except (OSError, sqlite3.Error) as error:
        raise WorldError(f"cannot open the world at {path}: {error}") from error
    try:
        conn.execute(f"PRAGMA busy_timeout = {int(busy_timeout_s * 1000)}")
        conn.execute("PRAGMA journal_mode = WAL")
        conn.execute("PRAGMA synchronous = NORMAL")
        conn.execute("PRAGMA foreign_keys = ON")
    except sqlite3.OperationalError as error:
        conn.close()
        raise WorldError(f"cannot open the world at {path}: {error}") from error
    except sqlite3.DatabaseError as error:
        conn.close()
        raise SchemaVersionError(f"{path} is not a SQLite database ({error})") from error
    return conn


def inspect(conn: sqlite3.Connection) -> FileState:
    """Read the application id, schema version and table count."""
    application_id = int(conn.execute("PRAGMA application_id").fetchone()[0])
    user_version = int(conn.execute("PRAGMA user_version").fetchone()[0])
    table_count = int(
        conn.execute(
            "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'"
        ).fetchone()[0]
    )
    return FileState(application_id, user_version, table_count)


def refuse_unless_ours(state: FileState, path: Path, *, allow_older: bool = False) -> None:
    """Raise a SchemaVersionError naming what is wrong with a non-empty file that is not ours."""
    if state.application_id != APPLICATION_ID:
        raise SchemaVersionError(
            f"{path} is not an Omega station world (application_id {state.application_id:#x}, "
            f"expected {APPLICATION_ID:#x}); choose another file with --world"
        )
    if state.user_version > SCHEMA_VERSION:
        raise SchemaVersionError(
            f"{path} was written by a newer star-harness (schema version {state.user_version}, "
            f"this one knows {SCHEMA_VERSION}); upgrade star-harness to open it"
        )
    upgradable = upgrade_statements(state.user_version) is not None
    if state.user_version < SCHEMA_VERSION and not (allow_older or upgradable):
        raise SchemaVersionError(
            f"{path} holds an older world (schema version {state.user_version}, current "
            f"{SCHEMA_VERSION}, no upgrade in place from it); rebuild it with "
            f"`star-harness seed --world {path}`"
        )


def upgrade_in_place(conn: sqlite3.Connection, path: Path) -> None:
    """Take an older world of ours to SCHEMA_VERSION in one write transaction (no-op if it is
    current: another process may have upgraded it since we looked)."""
    with write_transaction(conn):
        version = inspect(conn).user_version
        if version >= SCHEMA_VERSION:
            return
        statements = upgrade_statements(version)
        if statements is None:
            raise SchemaVersionError(
                f"{path} holds an older world (schema version {version}) with no upgrade in "
                f"place; rebuild it with `star-harness seed --world {path}`"
            )
        for statement in statements:
            conn.execute(statement)
        conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
    _log.info(
        "upgraded the world at %s from schema version %d to %d", path, version, SCHEMA_VERSION
    )


def install_schema(conn: sqlite3.Connection) -> None:
    """Create every table and stamp the header; call inside an open write transaction."""
    for statement in schema_statements():
        conn.execute(statement)
    conn.execute(f"PRAGMA application_id = {APPLICATION_ID}")
    conn.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")


def drop_all_tables(conn: sqlite3.Connection) -> None:
    """Remove every table of the file; call inside an open write transaction."""
    names = [
        str(row[0])
        for row in conn.execute(
            "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' "
            "ORDER BY sql LIKE 'CREATE VIRTUAL TABLE%' DESC, rowid DESC"
        )
    ]
    # Virtual tables (the lore's FTS5 index) first: dropping one drops its shadow tables,
    # and it cannot be dropped once they are gone.
    for name in names:
        conn.execute(f'DROP TABLE IF EXISTS "{name}"')


@contextmanager
def write_transaction(conn: sqlite3.Connection) -> Generator[None, None, None]:
    """`BEGIN IMMEDIATE` ... `COMMIT`; any exception inside rolls every write back."""
    if conn.in_transaction:
        raise TransactionStateError("a transaction is already open on this World")
    try:
        conn.execute("BEGIN IMMEDIATE")
    except sqlite3.OperationalError as error:
        raise _busy_or(error) from error
    try:
        yield
    except BaseException:
        conn.execute("ROLLBACK")
        raise
    try:
        conn.execute("COMMIT")
    except sqlite3.OperationalError as error:
        if conn.in_transaction:
            conn.execute("ROLLBACK")
        raise _busy_or(error) from error


@contextmanager
def read_snapshot(conn: sqlite3.Connection) -> Generator[None, None, None]:
    """A deferred read transaction, so several reads see one consistent state."""
    if conn.in_transaction:
        raise TransactionStateError("a transaction is already open on this World")
    conn.execute("BEGIN DEFERRED")
    try:
        yield
    finally:
        conn.execute("ROLLBACK")


def _busy_or(error: sqlite3.OperationalError) -> Exception:
    message = str(error)
    if "locked" in message or "busy" in message:
        return WorldBusyError(f"the world database stayed locked past the busy timeout ({message})")
    return error
