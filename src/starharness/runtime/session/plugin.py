"""SessionsPlugin: provides `ctx.get(SESSIONS)` over an in-memory or SQLite store."""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from ..kernel import Context, Plugin
from ..paths import star_harness_home
from .keys import SESSIONS
from .memory_store import MemoryStore
from .service import SessionService
from .sqlite import SqliteStore
from .store import SessionStore

SESSIONS_FILE = "sessions.db"


class SessionsConfig(BaseModel):
    """Where session logs go and how long they are kept."""

    model_config = ConfigDict(extra="forbid")

    store: Literal["memory", "sqlite"] = "sqlite"
    path: Path | None = None
    """SQLite file; default `$STAR_HARNESS_HOME/sessions.db`."""
    max_write_delay_ms: int = Field(default=100, ge=0, le=10_000)
    """How long appended events may wait in memory before a batch is written."""
    busy_timeout_ms: int = Field(default=5000, ge=0)
    keep_sessions: int | None = Field(default=None, ge=0)
    """Keep only this many stored sessions (the most recently active); None keeps all."""
    delete_on_close: bool = False
    """Remove a session's log from the store when it is closed."""


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
