"""The SQLite session store."""

from .schema import APPLICATION_ID, SCHEMA_VERSION
from .store import SqliteStore

__all__ = ["APPLICATION_ID", "SCHEMA_VERSION", "SqliteStore"]
