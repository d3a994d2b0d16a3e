"""How an NPC server runs: address, exposure, limits, turn bounds and transcript retention."""

from __future__ import annotations

import ipaddress
import os
import re
import socket
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from ...runtime.session.postgres import PostgresTarget, is_postgres_url
from ..world_calls import DEFAULT_WORLD_CONNECTIONS
from .gate import (
    DEFAULT_CONNECTIONS_PER_ADDRESS,
    DEFAULT_HEADER_TIMEOUT_S,
    DEFAULT_MAX_HEADER_BYTES,
    UNCAPPED_BY_DEFAULT,
)

_VARIABLE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
DEFAULT_PORT = 3099


class LimitsSettings(BaseModel):
    """What one connection may send and hold; exceeding a limit gets `error{limit}`."""

    model_config = ConfigDict(extra="forbid")

    max_frame_bytes: int = Field(default=64 * 1024, ge=256)
    """Largest frame accepted, in UTF-8 bytes."""
    max_encounters: int = Field(default=8, ge=1)
    """Open encounters per connection."""
    says_per_second: float = Field(default=4.0, gt=0)
    """Sustained says per connection; bursts up to `say_burst`."""
    say_burst: int = Field(default=8, ge=1)
    max_text_chars: int = Field(default=2000, ge=1)
    """Longest `encounter.say` text."""
    max_tick_days: int = Field(default=365, ge=1)
    opens_per_second: float = Field(default=10.0, gt=0)
    """Sustained `encounter.open` frames per connection; bursts up to `open_burst`."""
    open_burst: int = Field(default=20, ge=1)
    max_server_encounters: int = Field(default=4000, ge=1)
    """Open encounters across all connections; beyond it an open gets `error{busy}`."""
    server_opens_per_second: float = Field(default=500.0, gt=0)
    """Opens per second across all connections; bursts up to `server_open_burst`, then `busy`."""
    server_open_burst: int = Field(default=2500, ge=1)
    frames_per_second: float = Field(default=200.0, gt=0)
    """Frames per connection handled per second, in bursts of up to `frame_burst`; a faster
    sender is slowed (its socket is not read until its turn comes), never answered with errors."""
    frame_burst: int = Field(default=400, ge=1)
    send_queue_frames: int = Field(default=1024, ge=1)
    """Frames waiting for a slow reader before it is dropped."""
    send_timeout_s: float = Field(default=10.0, gt=0)
    """A reader that takes longer than this to accept one frame is dropped."""
    header_timeout_s: float = Field(default=DEFAULT_HEADER_TIMEOUT_S, gt=0, le=3600)
    """A request (a WebSocket handshake too) whose head and body have not arrived this long
    after its first byte (after the connection opened, for the first) is answered 408 and
    closed; a socket that sent nothing is just closed."""
    max_header_bytes: int = Field(default=DEFAULT_MAX_HEADER_BYTES, ge=1024, le=1 << 20)
    """Largest request head (request line and headers); beyond it, or with a line over 8 KiB
    or more than 128 headers, the request is answered 431 and the socket closed."""
    connections_per_address: int | None = Field(default=DEFAULT_CONNECTIONS_PER_ADDRESS, ge=1)
    """Sockets one client address (an IPv6 /64) may hold open at once; one more is answered
    429 and closed. None: no cap. Addresses in `uncapped_addresses` and the proxies uvicorn
    trusts (`FORWARDED_ALLOW_IPS`) are never capped."""
    uncapped_addresses: list[str] = Field(default_factory=lambda: list(UNCAPPED_BY_DEFAULT))
    """Addresses or CIDR blocks never capped: loopback by default (this machine's programs,
    and a reverse proxy on it); add a proxy's address here."""

    @field_validator("uncapped_addresses")
    @classmethod
    def _networks(cls, values: list[str]) -> list[str]:
        for value in values:
            try:
                ipaddress.ip_network(value.strip(), strict=False)
            except ValueError:
                raise ValueError(f"{value!r} is not an address or CIDR block") from None
        return values


class TurnSettings(BaseModel):
    """Bounds of one NPC turn: hitting one ends the turn with `error{limit}` then idle."""

    model_config = ConfigDict(extra="forbid")

    max_steps: int = Field(default=6, ge=1, le=100)
    timeout_s: float | None = Field(default=120.0, gt=0)


class SceneSettings(BaseModel):
    """Turn-taking in a scene of several NPCs (see docs/protocol.md, Scenes)."""

    model_config = ConfigDict(extra="forbid")

    max_npc_lines: int = Field(default=2, ge=1, le=8)
    """NPC lines per player line, the first answer included; then the floor returns to the
    player. 1: only the NPC addressed answers, NPCs never answer each other."""


class TranscriptSettings(BaseModel):
    """How many finished encounters keep their session log (for `star-harness inspect`)."""

    model_config = ConfigDict(extra="forbid")

    keep: int | None = Field(default=200, ge=0)
    """0 discards a transcript when its encounter ends; null keeps them all."""


class IdentitySettings(BaseModel):
    """Player tokens (signed JWTs): required to serve on anything but a loopback address."""

    model_config = ConfigDict(extra="forbid")

    secret_env: str | None = None
    """Variable holding the HS256 secret the game's backend signs player tokens with."""
    audience: str = Field(default="star-harness", min_length=1)
    """The `aud` claim tokens for this server carry."""
    leeway_s: float = Field(default=30.0, ge=0, le=600)
    """Clock skew tolerated on `exp` and `nbf`."""

    @field_validator("secret_env")
    @classmethod
    def _variable_name(cls, value: str | None) -> str | None:
        return _variable(value)


class TickSettings(BaseModel):
    """Who may advance the world clock, how far, and an optional server-side schedule."""

    model_config = ConfigDict(extra="forbid")

    players: bool | None = None
    """Whether player connections may send `world.tick`. None: only on a local server
    without player tokens (single-player); a privileged credential may always tick."""
    max_days_per_minute: int = Field(default=400, ge=1)
    """Days all ticks together may advance within a minute; beyond it `error{limit}`."""
    chunk_days: int = Field(default=1, ge=1, le=365)
    """A tick runs as steps of this many days, each in a worker thread, so the world is
    free for other players between steps."""
    every_s: float | None = Field(default=None, gt=0)
    """Advance the clock by `days` this often (the server's own schedule); None: never."""
    days: int = Field(default=1, ge=1, le=365)


class FanoutSettings(BaseModel):
    """A PostgreSQL bus shared by several workers serving one world (news, HUDs, the clock)."""

    model_config = ConfigDict(extra="forbid")

    url: str = Field(min_length=1)
    """`postgresql://user@host:port/db`, without a password (see `password_env`)."""
    password_env: str | None = None
    """Variable holding the database password."""

    @field_validator("url")
    @classmethod
    def _url(cls, value: str) -> str:
        PostgresTarget(value)  # a clear error for a non-URL or a URL carrying a password
        return value

    @field_validator("password_env")
    @classmethod
    def _variable_name(cls, value: str | None) -> str | None:
        return _variable(value)


class ServerSettings(BaseModel):
    """Everything about serving a game except which game."""

    # A refused `world` URL may carry a password: errors must not repeat the input.
    model_config = ConfigDict(extra="forbid", hide_input_in_errors=True)

    world: Path | str | None = None
    """The world file, or a `postgresql://user@host:port/db` URL (no password in it; see
    `world_password_env`) for a game with `Game.open_server_world`; default: the game's own."""
    world_password_env: str | None = None
    """Variable holding the password of the `world` database."""
    world_connections: int = Field(default=DEFAULT_WORLD_CONNECTIONS, ge=1, le=256)
    """For a `postgresql://` world: at most this many world calls at once, each in a thread of
    the server's own on a connection of its own (this worker's most connections to it)."""
    host: str = "127.0.0.1"
    port: int = Field(default=DEFAULT_PORT, ge=0, le=65535)
    """0 picks a free port (see `ready_file`)."""
    web_root: Path | None = None
    """A browser client served at `/`; none for headless (`GET /` is 404)."""
    auth_token_env: str | None = None
    """Variable holding the token clients must present; required for a non-loopback host."""
    allow_origin: list[str] = Field(default_factory=list[str])
    """Browser origins allowed besides the server's own (e.g. `http://localhost:5173`)."""
    public_names: list[str] = Field(default_factory=list[str])
    """Host names (or addresses) clients may reach the server by, besides loopback names;
    any other `Host` header is refused on every route (DNS rebinding)."""
    ready_file: Path | None = None
    """Written with `{url, pid}` once `/healthz` answers."""
    compress_frames: bool = False
    """Offer permessage-deflate to clients. Off by default: frames are small JSON, and each
    compressing socket keeps two zlib contexts (about 50 KB) for as long as it is open."""
    hide_harness_identity: bool = True
    """Leave the runtime's "you are an AI agent" section out of NPC prompts."""
    limits: LimitsSettings = Field(default_factory=LimitsSettings)
    identity: IdentitySettings = Field(default_factory=IdentitySettings)
    ticks: TickSettings = Field(default_factory=TickSettings)
    turn: TurnSettings = Field(default_factory=TurnSettings)
    scene: SceneSettings = Field(default_factory=SceneSettings)
    transcripts: TranscriptSettings = Field(default_factory=TranscriptSettings)
    fanout: FanoutSettings | None = None
    """Share news, HUD updates and the clock with other workers over PostgreSQL; None: this
    process alone serves the world."""
    worker_id: str | None = Field(default=None, min_length=1, max_length=200)
    """This worker's name in metrics and `/readyz`; default `hostname:pid`."""
    residents: list[str] = Field(default_factory=list[str])
    """The game's resident agents to run after each clock tick, by name (`Game.residents`);
    none by default. Each acts only through its game actions, guarded and audited."""

    @field_validator("auth_token_env", "world_password_env")
    @classmethod
    def _variable_name(cls, value: str | None) -> str | None:
        return _variable(value)

    def worker_name(self) -> str:
        """`worker_id`, or `hostname:pid`."""
        return self.worker_id or f"{socket.gethostname()}:{os.getpid()}"

    @field_validator("world", mode="before")
    @classmethod
    def _world(cls, value: object) -> object:
        # A URL stays text (a Path would fold its `//`); anything else is a file path.
        if isinstance(value, str) and is_postgres_url(value):
            PostgresTarget(value)  # refuses a password in the URL, without repeating it
            return value
        return Path(value) if isinstance(value, str) else value

    @model_validator(mode="after")
    def _connections_need_a_database(self) -> ServerSettings:
        if "world_connections" in self.model_fields_set and not isinstance(self.world, str):
            raise ValueError(
                "world_connections is for a postgresql:// world; a world file is called"
                " through one connection"
            )
        return self

    def world_place(self) -> Path | PostgresTarget | None:
        """Where the world lives: a file (None: the game's default) or a PostgreSQL database."""
        if isinstance(self.world, str):
            return PostgresTarget(self.world, self.world_password_env)
        return self.world

    @field_validator("residents")
    @classmethod
    def _unique(cls, values: list[str]) -> list[str]:
        if len(set(values)) != len(values):
            raise ValueError(f"a resident is named twice: {values}")
        return values

    @field_validator("public_names")
    @classmethod
    def _names(cls, values: list[str]) -> list[str]:
        cleaned: list[str] = []
        for value in values:
            name = value.strip().strip("[]").rstrip(".").lower()
            if not re.fullmatch(r"[a-z0-9._:-]+", name):
                raise ValueError(f"{value!r} is not a host name or address (no scheme or port)")
            cleaned.append(name)
        return cleaned

    @field_validator("allow_origin")
    @classmethod
    def _origins(cls, values: list[str]) -> list[str]:
        cleaned: list[str] = []
        for value in values:
            origin = value.strip().rstrip("/").lower()
            if not re.fullmatch(r"https?://[^/\s]+", origin):
                raise ValueError(f"{value!r} is not an origin like http://host:port")
            cleaned.append(origin)
        return cleaned


def _variable(value: str | None) -> str | None:
    if value is not None and not _VARIABLE.fullmatch(value):
        raise ValueError("must be the NAME of an environment variable, not a token")
    return value
