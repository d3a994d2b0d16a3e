"""GodotBridgePlugin: starts the bridge for the plugin's lifetime and registers enabled tools."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Final

from pydantic import BaseModel, ConfigDict, Field, field_validator

from ..runtime.kernel import Context, Event, Plugin, ServiceKey
from ..runtime.tools import TOOLS
from ..runtime.workspace import WORKSPACE
from .bridge.endpoint import default_home
from .bridge.registry import BridgeEvent
from .bridge.server import GodotBridge, checked_tool_names
from .bridge.settings import (
    DEFAULT_BASE_PORT,
    DEFAULT_GRACE_PERIOD_MS,
    DEFAULT_HANDSHAKE_TIMEOUT_MS,
    DEFAULT_MAX_HANDSHAKE_BYTES,
    DEFAULT_MAX_UNAUTHENTICATED,
    DEFAULT_PORT_SPAN,
    BridgeSettings,
)
from .runtime_tools import bridge_tool
from .tools.catalogue import GODOT_TOOLS, enabled_specs

_log = logging.getLogger("starharness.godot")

GODOT_BRIDGE: Final[ServiceKey[GodotBridge]] = ServiceKey(
    "godot.bridge", "add a row with plugin starharness.godot:GodotBridgePlugin"
)
"""The running bridge, for commands and plugins that show its status or call it directly."""

BRIDGE_EVENT: Final[Event[BridgeEvent]] = Event("godot/bridge-event")
"""Editor connects, disconnects, refused handshakes, scene changes and play errors."""

ALL_TOOLS: Final = "all"
"""`enabled_tools: [all]` enables every godot_* tool."""


class GodotBridgeConfig(BaseModel):
    """The bridge row: which tools the model gets, ports, the project and the protocol clocks."""

    model_config = ConfigDict(extra="forbid")

    enabled_tools: list[str] = []
    """godot_* tool names (or `all`); every tool is off unless listed."""
    base_port: int = Field(default=DEFAULT_BASE_PORT, ge=1, le=65_535)
    port_span: int = Field(default=DEFAULT_PORT_SPAN, ge=1, le=1_000)
    workspace: str | None = None
    """The project folder whose editors receive calls; null: the workspace row's root, else the
    current directory."""
    home: str | None = None
    """Where the endpoint file goes (`<home>/godot/endpoint.json`); null: $STAR_HARNESS_HOME."""
    time_scale: float = Field(default=1.0, gt=0)
    """Multiplies every protocol clock (tests shorten them)."""
    grace_period_ms: int = Field(default=DEFAULT_GRACE_PERIOD_MS, ge=0)
    """After start, a call with no editor waits this long for the addon to (re)connect."""
    handshake_timeout_ms: int = Field(default=DEFAULT_HANDSHAKE_TIMEOUT_MS, ge=1)
    max_handshake_bytes: int = Field(default=DEFAULT_MAX_HANDSHAKE_BYTES, ge=1024)
    """Bytes a connection may send before its handshake is checked."""
    max_unauthenticated: int = Field(default=DEFAULT_MAX_UNAUTHENTICATED, ge=1)
    """Connections waiting to hand-shake at once; a further one is closed."""

    @field_validator("enabled_tools")
    @classmethod
    def _known_tools(cls, names: list[str]) -> list[str]:
        if ALL_TOOLS in names:
            return [spec.name for spec in GODOT_TOOLS]
        checked_tool_names(names)
        return list(dict.fromkeys(names))

    def settings(self, workspace: Path) -> BridgeSettings:
        return BridgeSettings(
            home=Path(self.home).expanduser() if self.home else default_home(),
            base_port=self.base_port,
            port_span=self.port_span,
            workspace=workspace,
            enabled_tools=frozenset(self.enabled_tools),
            time_scale=self.time_scale,
            grace_period_ms=self.grace_period_ms,
            handshake_timeout_ms=self.handshake_timeout_ms,
            max_handshake_bytes=self.max_handshake_bytes,
            max_unauthenticated=self.max_unauthenticated,
        )


class GodotBridgePlugin(Plugin[GodotBridgeConfig]):
    """Provides GODOT_BRIDGE; registers one runtime tool per enabled godot_* tool."""

    Config = GodotBridgeConfig
    inject = (TOOLS,)
    provides = (GODOT_BRIDGE,)

    async def setup(self, ctx: Context, config: GodotBridgeConfig) -> None:
        settings = config.settings(_workspace(ctx, config))

        def publish(event: BridgeEvent) -> None:
            _log.info("Godot bridge: %s %s %s", event.kind, event.client_id, event.detail)
            ctx.emit(BRIDGE_EVENT, event)

        bridge = GodotBridge(settings, event_sink=publish)
        await bridge.start()
        # Registered first, so it runs last: the tools are gone before the bridge stops.
        ctx.scope.add(bridge.stop)
        _log.info(
            "Godot bridge listening on %s:%s (endpoint file %s)",
            settings.host,
            bridge.port,
            settings.endpoint_file,
        )
        ctx.provide(GODOT_BRIDGE, bridge)
        for spec in enabled_specs(settings.enabled_tools):
            ctx.get(TOOLS).register(bridge_tool(bridge, spec))


def _workspace(ctx: Context, config: GodotBridgeConfig) -> Path:
    if config.workspace is not None:
        return Path(config.workspace).expanduser()
    workspace = ctx.maybe(WORKSPACE)
    if workspace is not None:
        return workspace.root
    return Path.cwd()
