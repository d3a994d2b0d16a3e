"""The PostgreSQL session store: the SQLite store's contract on a server several processes share."""

from .identity import OwnedSchema
from .schema import APPLICATION, NAMESPACE, SCHEMA_VERSION
from .store import PostgresStore
from .target import PostgresTarget, is_postgres_url

__all__ = [
    "APPLICATION",
    "NAMESPACE",
    "SCHEMA_VERSION",
    "OwnedSchema",
    "PostgresStore",
    "PostgresTarget",
    "is_postgres_url",
]
