"""The SQLite session store."""

from .schema import (
    SCHEMA_VERSION,
)
from .store import SqliteStore

__all__ = [
    "SCHEMA_VERSION",
    "SqliteStore",
]
