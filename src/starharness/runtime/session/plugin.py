"""SessionsPlugin: provides `ctx.get(SESSIONS)` over an in-memory, SQLite or PostgreSQL store."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from ..kernel import Context, Plugin
from ..paths import star_harness_home
from .keys import SESSIONS
from .memory_store import MemoryStore
from .service import SessionService
from .sqlite import SqliteStore
from .store import SessionStore

if TYPE_CHECKING:
    from .postgres import PostgresTarget

SESSIONS_FILE = "sessions.db"


class SessionsConfig(BaseModel):
    """Where session logs go and how long they are kept."""

    # A refused url may carry a password: errors must not repeat the input.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    store: Literal["memory", "sqlite", "postgresql"] = "sqlite"
    """Given a `url`, the store is "postgresql" unless set otherwise."""
    path: Path | None = None
    """SQLite file; default `$STAR_HARNESS_HOME/sessions.db`."""
    url: str | None = None
    """PostgreSQL database (`postgresql://user@host:port/db`), without the password."""
    password_env: str | None = None
    """The environment variable (or .env / credentials.env entry) holding its password."""
    max_write_delay_ms: int = Field(default=100, ge=0, le=10_000)
    """How long appended events may wait in memory before a batch is written."""
    busy_timeout_ms: int = Field(default=5000, ge=0)
    keep_sessions: int | None = Field(default=None, ge=0)
    """Keep only this many stored sessions (the most recently active); None keeps all."""
    delete_on_close: bool = False
    """Remove a session's log from the store when it is closed."""

    @model_validator(mode="before")
    @classmethod
    def _url_selects_postgresql(cls, data: Any) -> Any:
        if isinstance(data, dict) and data.get("url") and "store" not in data:  # pyright: ignore[reportUnknownMemberType]
            return {**data, "store": "postgresql"}  # pyright: ignore[reportUnknownVariableType]
        return data  # pyright: ignore[reportUnknownVariableType]

    @model_validator(mode="after")
    def _url_only_for_postgresql(self) -> SessionsConfig:
        if self.store == "postgresql":
            if self.url is None:
                raise ValueError('store "postgresql" needs url: postgresql://user@host:port/db')
            self.postgres_target()  # refuses a password in the URL
        elif self.url is not None or self.password_env is not None:
            raise ValueError(f'url and password_env are for store "postgresql", not {self.store!r}')
        return self

    def postgres_target(self) -> PostgresTarget:
        """The PostgreSQL database of a "postgresql" store."""
        from .postgres import PostgresTarget  # psycopg loads only for a PostgreSQL store

        assert self.url is not None
        return PostgresTarget(self.url, self.password_env)


def default_sessions_path() -> Path:
    return star_harness_home() / SESSIONS_FILE


class SessionsPlugin(Plugin[SessionsConfig]):
    """Provides SESSIONS; the store is flushed and closed when the plugin is disposed."""

    Config = SessionsConfig
    provides = (SESSIONS,)

    async def setup(self, ctx: Context, config: SessionsConfig) -> None:
        store: SessionStore
        if config.store == "memory":
            store = MemoryStore()
        elif config.store == "postgresql":
            from .postgres import PostgresStore

            store = await PostgresStore.open(
                config.postgres_target(), max_write_delay_s=config.max_write_delay_ms / 1000
            )
        else:
            store = await SqliteStore.open(
                config.path.expanduser() if config.path else default_sessions_path(),
                max_write_delay_s=config.max_write_delay_ms / 1000,
                busy_timeout_ms=config.busy_timeout_ms,
            )
        service = SessionService(
            store, keep_sessions=config.keep_sessions, delete_on_close=config.delete_on_close
        )
        # Registered before `provide`, so on dispose the service disappears first, then closes.
        ctx.scope.add(service.aclose)
        ctx.provide(SESSIONS, service)
