"""How a bridge is configured; every default pairs with the addon with zero configuration."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from ..protocol.framing import DEFAULT_MAX_LINE_BYTES
from .endpoint import default_home, endpoint_path

DEFAULT_HOST: Final = "127.0.0.1"
DEFAULT_BASE_PORT: Final = 8765
DEFAULT_PORT_SPAN: Final = 10
DEFAULT_HANDSHAKE_TIMEOUT_MS: Final = 10_000
DEFAULT_MAX_HANDSHAKE_BYTES: Final = 64 * 1024
DEFAULT_MAX_UNAUTHENTICATED: Final = 16
# After start, a call with no editor waits this long for the addon's next reconnect attempt.
DEFAULT_GRACE_PERIOD_MS: Final = 8_000
DEFAULT_PROBE_TIMEOUT_S: Final = 0.5


@dataclass(frozen=True, slots=True)
class BridgeSettings:
    """Bridge configuration. `time_scale` multiplies every protocol clock (tests use ~0.01)."""

    home: Path = field(default_factory=default_home)
    host: str = DEFAULT_HOST
    base_port: int = DEFAULT_BASE_PORT
    port_span: int = DEFAULT_PORT_SPAN
    workspace: Path | None = None
    enabled_tools: frozenset[str] = frozenset()
    time_scale: float = 1.0
    handshake_timeout_ms: int = DEFAULT_HANDSHAKE_TIMEOUT_MS
    grace_period_ms: int = DEFAULT_GRACE_PERIOD_MS
    probe_timeout_s: float = DEFAULT_PROBE_TIMEOUT_S
    max_line_bytes: int = DEFAULT_MAX_LINE_BYTES
    max_handshake_bytes: int = DEFAULT_MAX_HANDSHAKE_BYTES
    """Bytes a connection may send before its handshake is checked (an editor_ready is small)."""
    max_unauthenticated: int = DEFAULT_MAX_UNAUTHENTICATED
    """Connections that have not yet handed over a valid token; more are closed at once."""

    def __post_init__(self) -> None:
        if self.host not in ("127.0.0.1", "localhost"):
            raise ValueError(f"the Godot bridge listens on loopback only, not {self.host!r}")
        if not 1 <= self.base_port <= 65_535 or self.port_span < 1:
            raise ValueError("base_port must be 1..65535 and port_span at least 1")
        if self.time_scale <= 0:
            raise ValueError("time_scale must be positive")

    @property
    def endpoint_file(self) -> Path:
        """The endpoint file this bridge publishes."""
        return endpoint_path(self.home)

    def seconds(self, milliseconds: float) -> float:
        """A protocol duration in seconds after scaling."""
        return milliseconds * self.time_scale / 1000.0
