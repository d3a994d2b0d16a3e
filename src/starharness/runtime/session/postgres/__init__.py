"""The PostgreSQL session store: the SQLite store's contract on a server several processes share."""

from .target import PostgresTarget, is_postgres_url

__all__ = ["PostgresTarget", "is_postgres_url"]
