"""Where a PostgreSQL store lives: a URL without its password, and the variable that holds it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import psycopg
from psycopg.conninfo import conninfo_to_dict, make_conninfo

from ...credentials import CredentialError, resolve_secret
from ..errors import StoreUnreachableError

_SCHEMES = ("postgresql://", "postgres://")
_LINK_DEFAULTS: dict[str, str] = {
    "connect_timeout": "10",
    # A peer that vanished without a reset (a dropped network, a host gone) would otherwise hold
    # a call, and the thread or shutdown waiting on it, for the kernel's two hours: probes after
    # 30 s idle find it within a minute, and sent data unacknowledged for 60 s ends the link.
    "keepalives": "1",
    "keepalives_idle": "30",
    "keepalives_interval": "10",
    "keepalives_count": "3",
    "tcp_user_timeout": "60000",
}
"""libpq settings every connection gets unless its URL sets them itself."""


def is_postgres_url(text: str) -> bool:
    """Whether `text` names a PostgreSQL database (a `postgresql://` or `postgres://` URL)."""
    return text.startswith(_SCHEMES)


@dataclass(frozen=True, slots=True)
class PostgresTarget:
    """A database by URL; the password, if any, is read from the variable `password_env` when
    connecting, so it never sits in config, a command line, a log or a repr."""

    url: str
    password_env: str | None = None

    def __post_init__(self) -> None:
        if not is_postgres_url(self.url):
            raise ValueError(f"a PostgreSQL store needs a postgresql:// URL, got {self.describe()}")
        try:
            params = conninfo_to_dict(self.url)
        except psycopg.ProgrammingError:
            raise ValueError(
                "the PostgreSQL URL does not parse (its text is not repeated here)"
            ) from None
        if params.get("password"):
            raise ValueError(
                "the PostgreSQL URL carries a password: remove it and name the environment"
                " variable that holds it instead (password_env)"
            )

    def describe(self) -> str:
        """host:port/dbname, for messages (never user or password)."""
        if not is_postgres_url(self.url):
            return "a value that is not a postgresql:// URL"
        try:
            params = conninfo_to_dict(self.url)
        except psycopg.ProgrammingError:
            return "an unparsable postgresql:// URL"
        host = params.get("host") or "localhost"
        port = params.get("port") or "5432"
        return f"postgresql://{host}:{port}/{params.get('dbname') or ''}"

    def connect(self, *, autocommit: bool = False) -> psycopg.Connection[tuple[Any, ...]]:
        """A new connection (blocking: call it from a worker thread)."""
        conninfo = self._conninfo()
        try:
            return psycopg.connect(conninfo, autocommit=autocommit)
        except psycopg.Error as exc:
            raise self._unreachable(exc) from None

    async def aconnect(
        self, *, autocommit: bool = False
    ) -> psycopg.AsyncConnection[tuple[Any, ...]]:
        """A new async connection, for the event loop (LISTEN, the workers' bus)."""
        conninfo = self._conninfo()
        try:
            return await psycopg.AsyncConnection.connect(conninfo, autocommit=autocommit)
        except psycopg.Error as exc:
            raise self._unreachable(exc) from None

    def _conninfo(self) -> str:
        password: str | None = None
        if self.password_env is not None:
            try:
                password = resolve_secret(self.password_env)
            except CredentialError as exc:
                raise StoreUnreachableError(f"cannot read {self.password_env}: {exc}") from None
            if password is None:
                raise StoreUnreachableError(
                    f"{self.password_env} is not set: it holds the password of {self.describe()}"
                )
        given = conninfo_to_dict(self.url)
        extra = {key: value for key, value in _LINK_DEFAULTS.items() if key not in given}
        if password is not None:
            extra["password"] = password
        return make_conninfo(self.url, **extra)

    def _unreachable(self, exc: psycopg.Error) -> StoreUnreachableError:
        # libpq's messages name host and user, never the password.
        return StoreUnreachableError(f"cannot connect to {self.describe()}: {exc}".strip())

    def __repr__(self) -> str:
        return f"PostgresTarget({self.describe()!r}, password_env={self.password_env!r})"
